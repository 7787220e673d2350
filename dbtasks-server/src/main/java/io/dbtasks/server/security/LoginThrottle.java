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
 * Throttles password logins (the login form and HTTP basic) per user name and client address, per
 * client address, and per user name across all addresses.
 *
 * <p>Spring Security publishes an {@link AuthenticationFailureBadCredentialsEvent} for every wrong
 * password or unknown user name; each is logged (the name with control characters replaced, the
 * client address), counted in the meter {@value #METER} and added to three counts kept in Caffeine
 * caches: by user name and address (names case-insensitive, as the users are), by address, and by
 * user name alone. Each count expires {@code window} after its latest failure. {@link
 * ThrottlingAuthenticationProvider} calls {@link #check} before any password is looked at: once a
 * count has reached its limit the attempt is refused with {@link LoginThrottledException},
 * unchecked, so a throttled guess costs no hashing and learns nothing, and the right password waits
 * too.
 *
 * <p>Failures from one address throttle that address for that name (and, past the address limit,
 * for every name), never the name's owner elsewhere: knowing a user name is not enough to lock its
 * owner out. Guesses spread over many addresses are bounded by the name's count across addresses,
 * which does not hold back an address the name logged in from within {@code known-address-window}.
 * A successful login forgets its name's failures from that address (not the address's own count).
 * The client address is the request's remote address: behind a reverse proxy, set {@code
 * server.forward-headers-strategy} so that it is the client's. Bearer tokens are not throttled
 * (they are long random secrets, checked by a hash lookup). Thread-safe.
 */
@Component
public class LoginThrottle implements ApplicationListener<AbstractAuthenticationEvent> {
    /** The counter of failed logins, tagged {@code reason}: {@code bad_credentials} or {@code throttled}. */
    public static final String METER = "dbtasks.server.login.failures";

    private static final Logger log = LoggerFactory.getLogger(LoginThrottle.class);
    /** Longer user names are kept as their hash, so a count costs little memory whatever is sent. */
    private static final int MAX_KEY_LENGTH = 128;

    private final ServerSecurityProperties.Throttle limits;
    private final Cache<String, Integer> byUserAndAddress;
    private final Cache<String, Integer> byAddress;
    private final Cache<String, Integer> byUser;
    /** Name and address pairs that logged in within the known-address window. */
    private final Cache<String, Boolean> knownAddresses;

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
                || limits.getMaxFailuresPerUserAllAddresses() < 1
                || limits.getKnownAddressWindow() == null
                || limits.getKnownAddressWindow().isNegative()
                || limits.getMaxTracked() < 1
                || limits.getWindow() == null
                || limits.getWindow().isNegative()
                || limits.getWindow().isZero()) {
            throw new IllegalStateException("dbtasks.server.security.login-throttle: max-failures-per-user,"
                    + " max-failures-per-address, max-failures-per-user-all-addresses and max-tracked must be at"
                    + " least 1, window positive (such as 15m) and known-address-window not negative (such as 30d)");
        }
        this.byUserAndAddress = counts();
        this.byAddress = counts();
        this.byUser = counts();
        this.knownAddresses = Caffeine.newBuilder()
                .expireAfterWrite(limits.getKnownAddressWindow())
                .maximumSize(limits.getMaxTracked())
                .build();
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
     * Refuses an attempt whose user name from this address, address, or user name from any address
     * (unless it logged in from this one lately) has failed too often lately.
     *
     * @param user the user name as sent
     * @param address the client address, or {@code null} if unknown
     * @throws LoginThrottledException if a count has reached its limit
     */
    public void check(String user, String address) {
        String userKey = userKey(user);
        String pairKey = pairKey(userKey, address);
        Duration wait = waitFor(byUserAndAddress, pairKey, limits.getMaxFailuresPerUser(), Duration.ZERO);
        if (address != null) {
            wait = waitFor(byAddress, address, limits.getMaxFailuresPerAddress(), wait);
        }
        if (address == null || knownAddresses.getIfPresent(pairKey) == null) {
            wait = waitFor(byUser, userKey, limits.getMaxFailuresPerUserAllAddresses(), wait);
        }
        if (!wait.isZero()) {
            throttled.increment();
            log.debug("Throttled login for user '{}' from {}", printable(user), address);
            throw new LoginThrottledException(wait);
        }
    }

    /** @return the longer of {@code wait} and what {@code key}'s count at its limit still waits */
    private Duration waitFor(Cache<String, Integer> counts, String key, int limit, Duration wait) {
        Integer failures = counts.getIfPresent(key);
        if (failures == null || failures < limit) {
            return wait;
        }
        Duration w = remaining(counts, key);
        return w.compareTo(wait) > 0 ? w : wait;
    }

    @Override
    public void onApplicationEvent(AbstractAuthenticationEvent event) {
        Authentication auth = event.getAuthentication();
        String address = auth.getDetails() instanceof WebAuthenticationDetails web ? web.getRemoteAddress() : null;
        if (event instanceof AuthenticationFailureBadCredentialsEvent) {
            failed(auth.getName(), address);
        } else if (event instanceof AuthenticationSuccessEvent) {
            String pairKey = pairKey(userKey(auth.getName()), address);
            byUserAndAddress.invalidate(pairKey);
            if (address != null && !limits.getKnownAddressWindow().isZero()) {
                knownAddresses.put(pairKey, Boolean.TRUE);
            }
        }
    }

    private void failed(String user, String address) {
        badCredentials.increment();
        String userKey = userKey(user);
        int forPair = byUserAndAddress.asMap().merge(pairKey(userKey, address), 1, Integer::sum);
        int forAddress = address == null ? 0 : byAddress.asMap().merge(address, 1, Integer::sum);
        int forUser = byUser.asMap().merge(userKey, 1, Integer::sum);
        log.warn(
                "Failed login for user '{}' from {} ({} failure(s) for this name from this address, {} from this"
                        + " address, {} for this name)",
                printable(user),
                address,
                forPair,
                forAddress,
                forUser);
        if (forPair == limits.getMaxFailuresPerUser()
                || forAddress == limits.getMaxFailuresPerAddress()
                || forUser == limits.getMaxFailuresPerUserAllAddresses()) {
            log.warn(
                    "Logins for user '{}' or from {} are throttled for {} after their last failure",
                    printable(user),
                    address,
                    limits.getWindow());
        }
    }

    /** Forgets every count, as after a restart (an operator's unlock). */
    public void forgetAll() {
        byUserAndAddress.invalidateAll();
        byAddress.invalidateAll();
        byUser.invalidateAll();
    }

    private Duration remaining(Cache<String, Integer> cache, String key) {
        Duration age =
                cache.policy().expireAfterWrite().flatMap(p -> p.ageOf(key)).orElse(Duration.ZERO);
        Duration left = limits.getWindow().minus(age);
        return left.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : left;
    }

    /** The key of a name from an address; the address cannot contain the separator. */
    private static String pairKey(String userKey, String address) {
        return (address == null ? "" : address) + "|" + userKey;
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
