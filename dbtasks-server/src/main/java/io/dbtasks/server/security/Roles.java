package io.dbtasks.server.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

/**
 * The server's three roles, each including the ones below it: {@code viewer} reads, {@code operator}
 * also acts on tasks and queues (enqueue, retry, cancel, run now, reschedule, pause, resume), and
 * {@code admin} also manages definitions and schedules and deletes.
 */
public final class Roles {
    /** Reads everything the API and dashboard show. */
    public static final String VIEWER = "viewer";
    /** Acts on tasks and queues. */
    public static final String OPERATOR = "operator";
    /** Manages job definitions and schedules, and deletes. */
    public static final String ADMIN = "admin";

    /** Spring authority of {@link #VIEWER}. */
    public static final String ROLE_VIEWER = "ROLE_VIEWER";
    /** Spring authority of {@link #OPERATOR}. */
    public static final String ROLE_OPERATOR = "ROLE_OPERATOR";
    /** Spring authority of {@link #ADMIN}. */
    public static final String ROLE_ADMIN = "ROLE_ADMIN";

    private static final List<String> ORDER = List.of(VIEWER, OPERATOR, ADMIN);

    private Roles() {}

    /**
     * @param roles role names, case-insensitive, as configured
     * @return the authorities they grant, each role with the ones below it ({@code admin} gives
     *     {@code ROLE_ADMIN, ROLE_OPERATOR, ROLE_VIEWER})
     * @throws IllegalArgumentException for a name that is not a role
     */
    public static List<GrantedAuthority> authorities(List<String> roles) {
        int highest = -1;
        for (String r : roles) {
            int i = ORDER.indexOf(r.trim().toLowerCase(Locale.ROOT));
            if (i < 0) {
                throw new IllegalArgumentException("Unknown role '" + r + "'; the roles are " + ORDER);
            }
            highest = Math.max(highest, i);
        }
        List<GrantedAuthority> out = new ArrayList<>();
        for (int i = 0; i <= highest; i++) {
            out.add(new SimpleGrantedAuthority("ROLE_" + ORDER.get(i).toUpperCase(Locale.ROOT)));
        }
        return out;
    }

    /**
     * @param authentication the caller, or {@code null}
     * @param authority {@link #ROLE_VIEWER}, {@link #ROLE_OPERATOR} or {@link #ROLE_ADMIN}
     * @return whether the caller holds it
     */
    public static boolean has(Authentication authentication, String authority) {
        return authentication != null
                && authentication.getAuthorities().stream().anyMatch(a -> authority.equals(a.getAuthority()));
    }
}
