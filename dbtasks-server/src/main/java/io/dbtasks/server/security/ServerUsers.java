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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * instances starting at once print one password between them. {@code
 * dbtasks.server.security.metrics-password} adds the user {@code metrics}, who may only scrape.
 *
 * <p>A wrong password costs the same whether the user name exists or not: every password is kept
 * as bcrypt of one reference cost (the highest cost among the configured bcrypt hashes, or
 * {@value #DEFAULT_BCRYPT_COST}), {@code {noop}} passwords are hashed so at startup, and an unknown
 * name is checked against a decoy of the same cost ({@link #userOrDecoy}). Thread-safe after
 * construction.
 */
@Component
public class ServerUsers {
    /** The name of the user created when none is configured. */
    public static final String GENERATED_ADMIN = "admin";
    /** The name of the user {@code dbtasks.server.security.metrics-password} adds. */
    public static final String METRICS_USER = "metrics";
    /** The bcrypt cost of every password check when no configured hash says otherwise (BCrypt's own default). */
    public static final int DEFAULT_BCRYPT_COST = 10;

    private static final Logger log = LoggerFactory.getLogger(ServerUsers.class);
    private static final int MIN_TOKEN_LENGTH = 20;
    private static final Pattern BCRYPT = Pattern.compile("^\\{bcrypt}\\$2[abxy]?\\$(\\d{2})\\$.{53}$");

    private final InMemoryUserDetailsManager users;
    private final Map<String, String> userByTokenHash = new HashMap<>();
    private final UserDetails decoy;

    /**
     * @param properties {@code dbtasks.server.security.*}
     * @param jdbc the server's database, for the generated admin
     * @param schema the server's tables, migrated before this reads them
     * @param encoder the password encoder ({@code {bcrypt}}, {@code {noop}}...)
     * @throws IllegalStateException for a configuration that cannot work, saying what to change
     */
    public ServerUsers(
            ServerSecurityProperties properties, JdbcTemplate jdbc, ServerSchema schema, PasswordEncoder encoder) {
        List<UserDetails> details = new ArrayList<>();
        if (properties.getUsers().isEmpty()) {
            details.add(generatedAdmin(properties.getAdminPassword(), jdbc, encoder));
        }
        for (ServerSecurityProperties.User u : properties.getUsers()) {
            details.add(configured(u, encoder));
            for (String token : u.getTokens()) {
                String hash = tokenHash(token, u.getName());
                if (userByTokenHash.putIfAbsent(hash, u.getName()) != null) {
                    throw new IllegalStateException("dbtasks.server.security: a bearer token of user '" + u.getName()
                            + "' is also given to another user; give each token to one user");
                }
            }
        }
        String metricsPassword = properties.getMetricsPassword();
        if (metricsPassword != null && !metricsPassword.isEmpty()) {
            if (details.stream().anyMatch(d -> d.getUsername().equals(METRICS_USER))) {
                throw new IllegalStateException(
                        "dbtasks.server.security.metrics-password adds the user '" + METRICS_USER
                                + "', but a configured user has that name; give that user the role metrics instead");
            }
            details.add(User.withUsername(METRICS_USER)
                    .password(isEncoded(metricsPassword, encoder) ? metricsPassword : encoder.encode(metricsPassword))
                    .authorities(Roles.authorities(List.of(Roles.METRICS)))
                    .build());
        }
        int cost = referenceCost(details);
        BCryptPasswordEncoder bcrypt = new BCryptPasswordEncoder(cost);
        List<UserDetails> hashed = new ArrayList<>();
        for (UserDetails d : details) {
            String password = d.getPassword();
            if (password.startsWith("{noop}")) {
                password = "{bcrypt}" + bcrypt.encode(password.substring("{noop}".length()));
            }
            hashed.add(User.withUserDetails(d).password(password).build());
        }
        this.users = new InMemoryUserDetailsManager(hashed);
        this.decoy = User.withUsername("decoy")
                .password("{bcrypt}" + bcrypt.encode(randomSecret(32)))
                .authorities(List.of())
                .credentialsExpired(true)
                .build();
    }

    /** @return the users, for bearer tokens and the dashboard */
    public InMemoryUserDetailsManager userDetailsService() {
        return users;
    }

    /**
     * The user of a login attempt, or, for a name no user has, a decoy whose password check costs
     * the same as a real one's and never succeeds (a random password, and expired credentials
     * should it ever match), so the answer's timing does not tell which names exist.
     *
     * @param name the user name as typed
     * @return the user, or the decoy
     */
    public UserDetails userOrDecoy(String name) {
        if (users.userExists(name)) {
            return users.loadUserByUsername(name);
        }
        return User.withUserDetails(decoy).username(name).build();
    }

    /**
     * @param token the token of an {@code Authorization: Bearer} header
     * @return the user it belongs to, or empty for an unknown token
     */
    public Optional<UserDetails> byToken(String token) {
        String name = userByTokenHash.get(sha256Hex(token));
        return name == null ? Optional.empty() : Optional.of(users.loadUserByUsername(name));
    }

    /** The highest bcrypt cost among the users' hashes, or {@value #DEFAULT_BCRYPT_COST} if none has one. */
    private static int referenceCost(List<UserDetails> details) {
        int cost = -1;
        for (UserDetails d : details) {
            Matcher m = BCRYPT.matcher(d.getPassword());
            if (m.matches()) {
                cost = Math.max(cost, Integer.parseInt(m.group(1)));
            }
        }
        return cost < 0 ? DEFAULT_BCRYPT_COST : Math.max(4, Math.min(31, cost));
    }

    /**
     * Whether a configured password is already encoded: {@code {id}...} with an id the encoder
     * knows ({@code bcrypt}, {@code noop}, {@code pbkdf2}...). Any other value, {@code {my-secret}}
     * included, is a plain password.
     */
    static boolean isEncoded(String password, PasswordEncoder encoder) {
        int close = password.indexOf('}');
        if (!password.startsWith("{") || close < 2) {
            return false;
        }
        try {
            encoder.matches("probe", password); // an empty one is refused before the id is looked up
            return true;
        } catch (IllegalArgumentException e) {
            return false; // no encoder has that id
        }
    }

    private static UserDetails configured(ServerSecurityProperties.User u, PasswordEncoder encoder) {
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
        } else if (!isEncoded(password, encoder)) {
            throw new IllegalStateException("dbtasks.server.security.users: the password of '" + u.getName()
                    + "' needs a known encoding prefix: {bcrypt}$2a$10$... or {noop}plain-text");
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
                    isEncoded(configuredPassword, encoder) ? configuredPassword : encoder.encode(configuredPassword);
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
