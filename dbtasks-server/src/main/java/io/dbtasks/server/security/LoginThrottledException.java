package io.dbtasks.server.security;

import java.time.Duration;
import org.springframework.security.core.AuthenticationException;

/**
 * A password login refused unchecked because its user name or client address failed too often
 * lately (see {@link LoginThrottle}). Answered 429 with {@code Retry-After} over HTTP basic, and
 * with the login page's throttling message for the form.
 */
public class LoginThrottledException extends AuthenticationException {
    private static final long serialVersionUID = 1L;

    private final transient Duration retryAfter;

    /** @param retryAfter how long until the throttle lifts, at least one second */
    public LoginThrottledException(Duration retryAfter) {
        super("Too many failed logins for this user name or from this address; try again in " + retryAfter.toSeconds()
                + " s");
        this.retryAfter = retryAfter;
    }

    /** @return how long until the throttle lifts, at least one second */
    public Duration retryAfter() {
        return retryAfter;
    }
}
