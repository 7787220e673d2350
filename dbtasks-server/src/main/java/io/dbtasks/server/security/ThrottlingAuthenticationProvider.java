package io.dbtasks.server.security;

import org.springframework.security.authentication.AuthenticationProvider;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.authentication.WebAuthenticationDetails;

/**
 * Asks {@link LoginThrottle} before the wrapped provider sees a password: a throttled user name or
 * client address is refused with {@link LoginThrottledException}, the password unchecked (neither
 * hashed nor compared with a remembered success). Thread-safe if the wrapped provider is.
 */
public class ThrottlingAuthenticationProvider implements AuthenticationProvider {
    private final LoginThrottle throttle;
    private final AuthenticationProvider delegate;

    /**
     * @param throttle the failure counts
     * @param delegate the provider that checks passwords
     */
    public ThrottlingAuthenticationProvider(LoginThrottle throttle, AuthenticationProvider delegate) {
        this.throttle = throttle;
        this.delegate = delegate;
    }

    @Override
    public Authentication authenticate(Authentication authentication) throws AuthenticationException {
        String address =
                authentication.getDetails() instanceof WebAuthenticationDetails web ? web.getRemoteAddress() : null;
        throttle.check(authentication.getName(), address);
        return delegate.authenticate(authentication);
    }

    @Override
    public boolean supports(Class<?> authentication) {
        return UsernamePasswordAuthenticationToken.class.isAssignableFrom(authentication);
    }
}
