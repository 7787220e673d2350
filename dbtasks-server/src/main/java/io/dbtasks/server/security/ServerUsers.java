package io.dbtasks.server.security;

import io.dbtasks.server.store.ServerSchema;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.stereotype.Component;

/**
 * The users of the server and their bearer tokens, read once at startup from
 * {@code dbtasks.server.security.users}, or, when none is configured, the {@code admin} of the first
 * start: its password is generated (24 random characters), printed once in the log at WARN level,
 * and stored as a bcrypt hash in {@code dbtasks_server_user}; a restart or another instance on the
 * same database finds the row and prints nothing. The row is claimed by its primary key, so two
 * instances starting at once print one password between them. Thread-safe after construction.
 */
@Component
public class ServerUsers {
    /** The name of the user created when none is configured. */
    public static final String GENERATED_ADMIN = "admin";

    private static final Logger log = LoggerFactory.getLogger(ServerUsers.class);
    private static final int MIN_TOKEN_LENGTH = 20;

    private final InMemoryUserDetailsManager users;
    private final Map<String, String> userByTokenHash = new HashMap<>();

    /**
     * @param properties {@code dbtasks.server.security.*}
     * @param jdbc the server's database, for the generated admin
     * @param schema the server's tables, migrated before this reads them
     * @param encoder the password encoder ({@code {bcrypt}}, {@code {noop}}...)
     */
    public ServerUsers(
            ServerSecurityProperties properties, JdbcTemplate jdbc, ServerSchema schema, PasswordEncoder encoder) {
        List<UserDetails> details = new ArrayList<>();
        if (properties.getUsers().isEmpty()) {
            details.add(generatedAdmin(properties.getAdminPassword(), jdbc, encoder));
        }
        for (ServerSecurityProperties.User u : properties.getUsers()) {
            details.add(configured(u));
            for (String token : u.getTokens()) {
                String hash = tokenHash(token, u.getName());
                if (userByTokenHash.putIfAbsent(hash, u.getName()) != null) {
                    throw new IllegalStateException("dbtasks.server.security: a bearer token of user '" + u.getName()
                            + "' is also given to another user; give each token to one user");
                }
            }
        }
        this.users = new InMemoryUserDetailsManager(details);
    }

    /** @return the users, for form login and HTTP basic */
    public InMemoryUserDetailsManager userDetailsService() {
        return users;
    }

    /**
     * @param token the token of an {@code Authorization: Bearer} header
     * @return the user it belongs to, or empty for an unknown token
     */
    public Optional<UserDetails> byToken(String token) {
        String name = userByTokenHash.get(sha256Hex(token));
        return name == null ? Optional.empty() : Optional.of(users.loadUserByUsername(name));
    }

    private static UserDetails configured(ServerSecurityProperties.User u) {
        if (u.getName() == null || u.getName().isBlank()) {
            throw new IllegalStateException("dbtasks.server.security.users[]: every user needs a 'name'");
        }
        String password = u.getPassword();
        if (password == null || password.isEmpty()) {
            if (u.getTokens().isEmpty()) {
                throw new IllegalStateException("dbtasks.server.security.users: user '" + u.getName()
                        + "' has neither a password nor a bearer token");
            }
            // Tokens only: no password can match this one.
            password = "{noop}" + randomSecret(32) + "-no-password";
        } else if (!password.startsWith("{")) {
            throw new IllegalStateException("dbtasks.server.security.users: the password of '" + u.getName()
                    + "' needs its encoding prefix: {bcrypt}$2a$10$... or {noop}plain-text");
        }
        try {
            return User.withUsername(u.getName())
                    .password(password)
                    .authorities(Roles.authorities(u.getRoles()))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException(
                    "dbtasks.server.security.users: user '" + u.getName() + "': " + e.getMessage(), e);
        }
    }

    private static UserDetails generatedAdmin(String configuredPassword, JdbcTemplate jdbc, PasswordEncoder encoder) {
        if (configuredPassword != null && !configuredPassword.isEmpty()) {
            String encoded =
                    configuredPassword.startsWith("{") ? configuredPassword : encoder.encode(configuredPassword);
            return admin(encoded);
        }
        List<String> stored = jdbc.queryForList(
                "SELECT password_hash FROM dbtasks_server_user WHERE name = ?", String.class, GENERATED_ADMIN);
        if (!stored.isEmpty()) {
            return admin(stored.get(0));
        }
        String password = randomSecret(24);
        String hash = "{bcrypt}" + new BCryptPasswordEncoder().encode(password);
        try {
            jdbc.update(
                    "INSERT INTO dbtasks_server_user (name, password_hash, roles, created_at) VALUES (?, ?, ?, ?)",
                    GENERATED_ADMIN,
                    hash,
                    Roles.ADMIN,
                    System.currentTimeMillis());
        } catch (DuplicateKeyException e) {
            // Another instance started at the same moment and printed its own password.
            return admin(jdbc.queryForObject(
                    "SELECT password_hash FROM dbtasks_server_user WHERE name = ?", String.class, GENERATED_ADMIN));
        }
        log.warn(
                "\n\n    Generated password of user '{}' (role admin): {}\n\n"
                        + "    It is printed this once and stored hashed in dbtasks_server_user. Configure users with"
                        + " dbtasks.server.security.users[...] (then this one is not used), or set"
                        + " dbtasks.server.security.admin-password.\n",
                GENERATED_ADMIN,
                password);
        return admin(hash);
    }

    private static UserDetails admin(String encodedPassword) {
        return User.withUsername(GENERATED_ADMIN)
                .password(encodedPassword)
                .authorities(Roles.authorities(List.of(Roles.ADMIN)))
                .build();
    }

    private static String tokenHash(String token, String user) {
        if (token.startsWith("{sha256}")) {
            String hex = token.substring("{sha256}".length()).toLowerCase(java.util.Locale.ROOT);
            if (!hex.matches("[0-9a-f]{64}")) {
                throw new IllegalStateException("dbtasks.server.security.users: a {sha256} token of '" + user
                        + "' must be 64 hex digits (sha256sum of the token)");
            }
            return hex;
        }
        if (token.length() < MIN_TOKEN_LENGTH) {
            throw new IllegalStateException("dbtasks.server.security.users: the bearer tokens of '" + user
                    + "' must be at least " + MIN_TOKEN_LENGTH + " characters (e.g. openssl rand -hex 24)");
        }
        return sha256Hex(token);
    }

    static String sha256Hex(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String randomSecret(int length) {
        byte[] bytes = new byte[length];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes).substring(0, length);
    }
}
