package io.dbtasks.server.security;

import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code dbtasks.server.security.*}: the users of the server, their roles and bearer tokens.
 *
 * <p>With no user configured, the first start creates {@code admin} with a generated password,
 * printed once in the log and kept as a bcrypt hash in the table {@code dbtasks_server_user}, so a
 * restart (or another instance on the same database) does not print a new one. {@link #getAdminPassword()}
 * sets that admin's password instead (nothing is generated, printed or stored).
 */
@ConfigurationProperties("dbtasks.server.security")
public class ServerSecurityProperties {
    private List<User> users = new ArrayList<>();
    private String adminPassword;
    private boolean hidePayloadsFromViewers;

    /** @return the configured users; empty for the generated admin */
    public List<User> getUsers() {
        return users;
    }

    /** @param users the configured users */
    public void setUsers(List<User> users) {
        this.users = users;
    }

    /** @return the password of {@code admin} when no user is configured, or {@code null} to generate one */
    public String getAdminPassword() {
        return adminPassword;
    }

    /** @param adminPassword the password of {@code admin} when no user is configured (plain text, or {@code {bcrypt}...}) */
    public void setAdminPassword(String adminPassword) {
        this.adminPassword = adminPassword;
    }

    /** @return whether users with only the viewer role see no payloads and no stack traces; default false */
    public boolean isHidePayloadsFromViewers() {
        return hidePayloadsFromViewers;
    }

    /** @param hidePayloadsFromViewers whether viewers see no payloads and no stack traces */
    public void setHidePayloadsFromViewers(boolean hidePayloadsFromViewers) {
        this.hidePayloadsFromViewers = hidePayloadsFromViewers;
    }

    /** One configured user. */
    public static class User {
        private String name;
        private String password;
        private List<String> roles = new ArrayList<>(List.of(Roles.VIEWER));
        private List<String> tokens = new ArrayList<>();

        /** @return the user name, as typed at the login form and in HTTP basic */
        public String getName() {
            return name;
        }

        /** @param name the user name */
        public void setName(String name) {
            this.name = name;
        }

        /**
         * @return the password with its encoding: {@code {bcrypt}$2a$10$...} or {@code {noop}plain};
         *     {@code null} for a user that authenticates with bearer tokens only
         */
        public String getPassword() {
            return password;
        }

        /** @param password the password with its encoding prefix, {@code {bcrypt}} or {@code {noop}} */
        public void setPassword(String password) {
            this.password = password;
        }

        /** @return the roles: {@code viewer}, {@code operator}, {@code admin}; default viewer */
        public List<String> getRoles() {
            return roles;
        }

        /** @param roles the roles: {@code viewer}, {@code operator}, {@code admin} */
        public void setRoles(List<String> roles) {
            this.roles = roles;
        }

        /**
         * @return the bearer tokens of this user for {@code Authorization: Bearer <token>}: the token
         *     itself (at least 20 characters) or {@code {sha256}<hex>} of it
         */
        public List<String> getTokens() {
            return tokens;
        }

        /** @param tokens the bearer tokens, plain or {@code {sha256}<hex>} */
        public void setTokens(List<String> tokens) {
            this.tokens = tokens;
        }
    }
}
