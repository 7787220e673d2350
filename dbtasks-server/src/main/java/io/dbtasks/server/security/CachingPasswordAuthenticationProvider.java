package io.dbtasks.server.security;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import org.springframework.security.authentication.AuthenticationProvider;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.AuthenticationException;

/**
 * Checks user name and password with the wrapped provider (bcrypt: tens of milliseconds of CPU by
 * design) once, then remembers the success for {@link #TTL} under a SHA-256 of name and password,
 * so an API client sending HTTP basic on every request does not pay bcrypt every time. Only
 * successes are remembered; a wrong password always goes to the wrapped provider. The successes are
 * kept in a Caffeine cache of at most {@link #MAX_ENTRIES} entries, each expiring {@link #TTL} after
 * it was checked. Thread-safe.
 */
public class CachingPasswordAuthenticationProvider implements AuthenticationProvider {
    /** How long a checked password is remembered. */
    public static final Duration TTL = Duration.ofMinutes(5);
    /** The most remembered passwords. */
    public static final int MAX_ENTRIES = 10_000;

    private final AuthenticationProvider delegate;
    private final Cache<String, Authentication> cache =
            Caffeine.newBuilder().expireAfterWrite(TTL).maximumSize(MAX_ENTRIES).build();

    /** @param delegate the provider that really checks passwords */
    public CachingPasswordAuthenticationProvider(AuthenticationProvider delegate) {
        this.delegate = delegate;
    }

    @Override
    public Authentication authenticate(Authentication authentication) throws AuthenticationException {
        if (!(authentication.getCredentials() instanceof String password)) {
            return delegate.authenticate(authentication);
        }
        String key = digest(authentication.getName() + "\0" + password);
        Authentication remembered = cache.getIfPresent(key);
        if (remembered != null) {
            return remembered;
        }
        Authentication result = delegate.authenticate(authentication);
        if (result != null && result.isAuthenticated()) {
            cache.put(key, result);
        }
        return result;
    }

    @Override
    public boolean supports(Class<?> authentication) {
        return UsernamePasswordAuthenticationToken.class.isAssignableFrom(authentication);
    }

    private static String digest(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
