package io.dbtasks.server.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.security.authentication.AuthenticationProvider;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.AuthenticationException;

/**
 * Checks user name and password with the wrapped provider (bcrypt: tens of milliseconds of CPU by
 * design) once, then remembers the success for {@link #TTL_MILLIS} under a SHA-256 of name and
 * password, so an API client sending HTTP basic on every request does not pay bcrypt every time.
 * Only successes are remembered; a wrong password always goes to the wrapped provider. The cache
 * holds at most {@link #MAX_ENTRIES} entries. Thread-safe.
 */
public class CachingPasswordAuthenticationProvider implements AuthenticationProvider {
    /** How long a checked password is remembered, in milliseconds. */
    public static final long TTL_MILLIS = 5 * 60_000;
    /** The most remembered passwords. */
    public static final int MAX_ENTRIES = 10_000;

    private record Entry(Authentication authentication, long expiresAt) {}

    private final AuthenticationProvider delegate;
    private final Map<String, Entry> cache = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
            return size() > MAX_ENTRIES;
        }
    };

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
        long now = System.currentTimeMillis();
        synchronized (cache) {
            Entry e = cache.get(key);
            if (e != null && e.expiresAt() > now) {
                return e.authentication();
            }
        }
        Authentication result = delegate.authenticate(authentication);
        if (result != null && result.isAuthenticated()) {
            synchronized (cache) {
                cache.put(key, new Entry(result, now + TTL_MILLIS));
            }
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
