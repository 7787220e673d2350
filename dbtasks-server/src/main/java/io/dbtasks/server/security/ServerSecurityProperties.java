package io.dbtasks.server.security;

import java.time.Duration;
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
    private String metricsPassword;
    private boolean hidePayloadsFromViewers;
    private final Throttle loginThrottle = new Throttle();

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

    /**
     * @param adminPassword the password of {@code admin} when no user is configured: plain text (one
     *     that begins with a brace, such as {@code {my-secret}}, too), or encoded with a known prefix
     *     ({@code {bcrypt}...}, {@code {noop}...})
     */
    public void setAdminPassword(String adminPassword) {
        this.adminPassword = adminPassword;
    }

    /** @return the password of the user {@code metrics}, who only scrapes {@code /actuator/prometheus}; {@code null} for no such user */
    public String getMetricsPassword() {
        return metricsPassword;
    }

    /**
     * @param metricsPassword the password of the user {@code metrics} (role {@code metrics}: scrapes
     *     {@code /actuator/prometheus}, nothing else), plain or encoded as {@link #setAdminPassword}
     */
    public void setMetricsPassword(String metricsPassword) {
        this.metricsPassword = metricsPassword;
    }

    /** @return the login throttling limits */
    public Throttle getLoginThrottle() {
        return loginThrottle;
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

        /** @return the roles: {@code viewer}, {@code operator}, {@code admin}, {@code metrics}; default viewer */
        public List<String> getRoles() {
            return roles;
        }

        /**
         * @param roles the roles: {@code viewer}, {@code operator}, {@code admin} (each with the ones
         *     before it), {@code metrics} (scrapes {@code /actuator/prometheus} only)
         */
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

    /**
     * {@code dbtasks.server.security.login-throttle.*}: after {@link #getMaxFailuresPerUser()} wrong
     * passwords for one user name, or {@link #getMaxFailuresPerAddress()} from one client address,
     * each within {@link #getWindow()} of the one before, further password logins for that name or
     * from that address are refused (429, or the login page's error) without checking the password
     * until {@link #getWindow()} has passed since the last failure.
     */
    public static class Throttle {
        private int maxFailuresPerUser = 5;
        private int maxFailuresPerAddress = 20;
        private int maxFailuresPerUserAllAddresses = 100;
        private Duration knownAddressWindow = Duration.ofDays(30);
        private Duration window = Duration.ofMinutes(15);
        private int maxTracked = 100_000;

        /** @return failures for one user name from one address before that address is throttled for it; default 5 */
        public int getMaxFailuresPerUser() {
            return maxFailuresPerUser;
        }

        /**
         * @param maxFailuresPerUser failures for one user name from one address before that address is
         *     throttled for it, at least 1
         */
        public void setMaxFailuresPerUser(int maxFailuresPerUser) {
            this.maxFailuresPerUser = maxFailuresPerUser;
        }

        /** @return failures from one client address before it is throttled; default 20 */
        public int getMaxFailuresPerAddress() {
            return maxFailuresPerAddress;
        }

        /** @param maxFailuresPerAddress failures from one client address before it is throttled, at least 1 */
        public void setMaxFailuresPerAddress(int maxFailuresPerAddress) {
            this.maxFailuresPerAddress = maxFailuresPerAddress;
        }

        /**
         * @return failures for one user name from all addresses together before it is throttled from
         *     every address it has not logged in from within {@link #getKnownAddressWindow()}; default 100
         */
        public int getMaxFailuresPerUserAllAddresses() {
            return maxFailuresPerUserAllAddresses;
        }

        /** @param maxFailuresPerUserAllAddresses see {@link #getMaxFailuresPerUserAllAddresses()}, at least 1 */
        public void setMaxFailuresPerUserAllAddresses(int maxFailuresPerUserAllAddresses) {
            this.maxFailuresPerUserAllAddresses = maxFailuresPerUserAllAddresses;
        }

        /**
         * @return how long after a successful login its address stays exempt from the name's count
         *     across addresses; default 30 days, zero for never
         */
        public Duration getKnownAddressWindow() {
            return knownAddressWindow;
        }

        /** @param knownAddressWindow see {@link #getKnownAddressWindow()}, not negative */
        public void setKnownAddressWindow(Duration knownAddressWindow) {
            this.knownAddressWindow = knownAddressWindow;
        }

        /** @return how long failures are remembered after the last one, and so how long a throttle lasts; default 15 minutes */
        public Duration getWindow() {
            return window;
        }

        /** @param window how long failures are remembered after the last one, positive */
        public void setWindow(Duration window) {
            this.window = window;
        }

        /** @return the most user names and addresses whose failures are remembered at once; default 100,000 */
        public int getMaxTracked() {
            return maxTracked;
        }

        /** @param maxTracked the most user names and addresses remembered at once, at least 1 */
        public void setMaxTracked(int maxTracked) {
            this.maxTracked = maxTracked;
        }
    }
}
