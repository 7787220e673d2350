package io.dbtasks.server.security;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Component;

/**
 * Whether the caller may see payloads and stack traces: everyone may, unless
 * {@code dbtasks.server.security.hide-payloads-from-viewers=true}, in which case only operators and
 * admins may. The API and the dashboard ask it before showing either.
 */
@Component
public class PayloadVisibility {
    private final boolean hideFromViewers;

    /** @param properties {@code dbtasks.server.security.*} */
    public PayloadVisibility(ServerSecurityProperties properties) {
        this.hideFromViewers = properties.isHidePayloadsFromViewers();
    }

    /** @return whether the current request's caller may see payloads and stack traces */
    public boolean showPayloads() {
        return showPayloads(SecurityContextHolder.getContext().getAuthentication());
    }

    /**
     * @param authentication the caller, or {@code null}
     * @return whether that caller may see payloads and stack traces
     */
    public boolean showPayloads(Authentication authentication) {
        return !hideFromViewers || Roles.has(authentication, Roles.ROLE_OPERATOR);
    }
}
