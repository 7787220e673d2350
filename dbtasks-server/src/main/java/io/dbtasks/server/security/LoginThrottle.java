package io.dbtasks.server.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationListener;
import org.springframework.security.authentication.event.AbstractAuthenticationEvent;
import org.springframework.security.authentication.event.AuthenticationFailureBadCredentialsEvent;
import org.springframework.security.authentication.event.AuthenticationSuccessEvent;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.authentication.WebAuthenticationDetails;
import org.springframework.stereotype.Component;

/**
 * Throttles password logins (the login form and HTTP basic) per user name and per client address.
 *
 * <p>Spring Security publishes an {@link AuthenticationFailureBadCredentialsEvent} for every wrong
 * password or unknown user name; each is logged (the name with control characters replaced, the
 * client address), counted in the meter {@value #METER} and added to two counts kept in Caffeine
 * caches, one by user name (case-insensitive, as the users are) and one by address. Each count
 * expires {@code window} after its latest failure. {@link ThrottlingAuthenticationProvider} calls
 * {@link #check} before any password is looked at: once either count has reached its limit the
 * attempt is refused with {@link LoginThrottledException}, unchecked, so a throttled guess costs no
 * hashing and learns nothing, and the right password waits too. A successful login forgets its
 * name's count (not its address's). The client address is the request's remote address: behind a
 * reverse proxy, set {@code server.forward-headers-strategy} so that it is the client's. Bearer
 * tokens are not throttled (they are long random secrets, checked by a hash lookup). Thread-safe.
 */
@Component
public class LoginThrottle implements ApplicationListener<AbstractAuthenticationEvent> {
    /** The counter of failed logins, tagged {@code reason}: {@code bad_credentials} or {@code throttled}. */
    public static final String METER = "dbtasks.server.login.failures";

    private static final Logger log = LoggerFactory.getLogger(LoginThrottle.class);
    /** Longer user names are kept as their hash, so a count costs little memory whatever is sent. */
    private static final int MAX_KEY_LENGTH = 128;

    private final ServerSecurityProperties.Throttle limits;
    private final Cache<String, Integer> byUser;
    private final Cache<String, Integer> byAddress;
    private final Counter badCredentials;
    private final Counter throttled;

    /**
     * @param properties the limits under {@code dbtasks.server.security.login-throttle}
     * @param meters where the failures are counted
     * @throws IllegalStateException for limits out of range
     */
    public LoginThrottle(ServerSecurityProperties properties, MeterRegistry meters) {
        this.limits = properties.getLoginThrottle();
        if (limits.getMaxFailuresPerUser() < 1
                || limits.getMaxFailuresPerAddress() < 1
                || limits.getMaxTracked() < 1
                || limits.getWindow() == null
                || limits.getWindow().isNegative()
                || limits.getWindow().isZero()) {
            throw new IllegalStateException("dbtasks.server.security.login-throttle: max-failures-per-user,"
                    + " max-failures-per-address and max-tracked must be at least 1 and window positive (such as 15m)");
        }
        this.byUser = counts();
        this.byAddress = counts();
        this.badCredentials = Counter.builder(METER)
                .description("Failed password logins (form and HTTP basic)")
                .tag("reason", "bad_credentials")
                .register(meters);
        this.throttled = Counter.builder(METER)
                .description("Failed password logins (form and HTTP basic)")
                .tag("reason", "throttled")
                .register(meters);
    }

    private Cache<String, Integer> counts() {
        return Caffeine.newBuilder()
                .expireAfterWrite(limits.getWindow())
                .maximumSize(limits.getMaxTracked())
                .build();
    }

    /**
     * Refuses an attempt whose user name or address has failed too often lately.
     *
     * @param user the user name as sent
     * @param address the client address, or {@code null} if unknown
     * @throws LoginThrottledException if either has reached its limit
     */
    public void check(String user, String address) {
        Duration wait = Duration.ZERO;
        String userKey = userKey(user);
        Integer userFailures = byUser.getIfPresent(userKey);
        if (userFailures != null && userFailures >= limits.getMaxFailuresPerUser()) {
            wait = remaining(byUser, userKey);
        }
        if (address != null) {
            Integer addressFailures = byAddress.getIfPresent(address);
            if (addressFailures != null && addressFailures >= limits.getMaxFailuresPerAddress()) {
                Duration w = remaining(byAddress, address);
                wait = w.compareTo(wait) > 0 ? w : wait;
            }
        }
        if (!wait.isZero()) {
            throttled.increment();
            log.debug("Throttled login for user '{}' from {}", printable(user), address);
            throw new LoginThrottledException(wait);
        }
    }

    @Override
    public void onApplicationEvent(AbstractAuthenticationEvent event) {
        Authentication auth = event.getAuthentication();
        String address = auth.getDetails() instanceof WebAuthenticationDetails web ? web.getRemoteAddress() : null;
        if (event instanceof AuthenticationFailureBadCredentialsEvent) {
            failed(auth.getName(), address);
        } else if (event instanceof AuthenticationSuccessEvent) {
            byUser.invalidate(userKey(auth.getName()));
        }
    }

    private void failed(String user, String address) {
        badCredentials.increment();
        int forUser = byUser.asMap().merge(userKey(user), 1, Integer::sum);
        int forAddress = address == null ? 0 : byAddress.asMap().merge(address, 1, Integer::sum);
        log.warn(
                "Failed login for user '{}' from {} ({} failure(s) for this name, {} from this address)",
                printable(user),
                address,
                forUser,
                forAddress);
        if (forUser == limits.getMaxFailuresPerUser() || forAddress == limits.getMaxFailuresPerAddress()) {
            log.warn(
                    "Logins for user '{}' or from {} are throttled for {} after their last failure",
                    printable(user),
                    address,
                    limits.getWindow());
        }
    }

    /** Forgets every count, as after a restart (an operator's unlock). */
    public void forgetAll() {
        byUser.invalidateAll();
        byAddress.invalidateAll();
    }

    private Duration remaining(Cache<String, Integer> cache, String key) {
        Duration age =
                cache.policy().expireAfterWrite().flatMap(p -> p.ageOf(key)).orElse(Duration.ZERO);
        Duration left = limits.getWindow().minus(age);
        return left.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : left;
    }

    private static String userKey(String user) {
        String key = user == null ? "" : user.toLowerCase(Locale.ROOT);
        if (key.length() <= MAX_KEY_LENGTH) {
            return key;
        }
        return "sha256:" + ServerUsers.sha256Hex(key);
    }

    /** The name for a log line: control and other unprintable characters as {@code ?}, at most 100 characters. */
    static String printable(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        s.codePoints().limit(100).forEach(c -> {
            boolean visible = !Character.isISOControl(c)
                    && Character.getType(c) != Character.FORMAT
                    && Character.getType(c) != Character.LINE_SEPARATOR
                    && Character.getType(c) != Character.PARAGRAPH_SEPARATOR
                    && Character.getType(c) != Character.SURROGATE
                    && Character.getType(c) != Character.UNASSIGNED;
            out.appendCodePoint(visible && c != '\'' ? c : '?');
        });
        return s.codePointCount(0, s.length()) > 100 ? out + "..." : out.toString();
    }
}
