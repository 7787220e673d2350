package io.dbtasks.server.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.SimpleGrantedAuthority;

/**
 * The server's roles. Three are ranked, each including the ones below it: {@code viewer} reads,
 * {@code operator} also acts on tasks and queues (enqueue, retry, cancel, run now, reschedule, pause,
 * resume, batches), and {@code admin} also manages and runs job definitions, manages schedules and
 * deletes. {@code metrics} stands apart: it scrapes {@code /actuator/prometheus} and nothing else
 * (an admin may scrape too). Which action needs which role is stated once, in {@link RoleRules}.
 */
public final class Roles {
    /** Reads everything the API and dashboard show. */
    public static final String VIEWER = "viewer";
    /** Acts on tasks and queues. */
    public static final String OPERATOR = "operator";
    /** Manages and runs job definitions, manages schedules, and deletes. */
    public static final String ADMIN = "admin";
    /** Scrapes {@code /actuator/prometheus}, nothing else; outside the ranking. */
    public static final String METRICS = "metrics";

    /** Spring authority of {@link #VIEWER}. */
    public static final String ROLE_VIEWER = "ROLE_VIEWER";
    /** Spring authority of {@link #OPERATOR}. */
    public static final String ROLE_OPERATOR = "ROLE_OPERATOR";
    /** Spring authority of {@link #ADMIN}. */
    public static final String ROLE_ADMIN = "ROLE_ADMIN";
    /** Spring authority of {@link #METRICS}. */
    public static final String ROLE_METRICS = "ROLE_METRICS";

    private static final List<String> ORDER = List.of(VIEWER, OPERATOR, ADMIN);

    private Roles() {}

    /**
     * @param roles role names, case-insensitive, as configured
     * @return the authorities they grant, each ranked role with the ones below it ({@code admin} gives
     *     {@code ROLE_ADMIN, ROLE_OPERATOR, ROLE_VIEWER}); {@code metrics} gives {@code ROLE_METRICS} only
     * @throws IllegalArgumentException for a name that is not a role
     */
    public static List<GrantedAuthority> authorities(List<String> roles) {
        int highest = -1;
        boolean metrics = false;
        for (String r : roles) {
            String role = r.trim().toLowerCase(Locale.ROOT);
            if (role.equals(METRICS)) {
                metrics = true;
                continue;
            }
            int i = ORDER.indexOf(role);
            if (i < 0) {
                throw new IllegalArgumentException(
                        "Unknown role '" + r + "'; the roles are " + ORDER + " and " + METRICS);
            }
            highest = Math.max(highest, i);
        }
        List<GrantedAuthority> out = new ArrayList<>();
        for (int i = 0; i <= highest; i++) {
            out.add(new SimpleGrantedAuthority("ROLE_" + ORDER.get(i).toUpperCase(Locale.ROOT)));
        }
        if (metrics) {
            out.add(new SimpleGrantedAuthority(ROLE_METRICS));
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
