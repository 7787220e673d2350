package io.dbtasks.server.security;

import io.dbtasks.server.audit.AuditConfig;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Map;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.security.authentication.AuthenticationProvider;
import org.springframework.security.authentication.dao.DaoAuthenticationProvider;
import org.springframework.security.config.annotation.method.configuration.EnableMethodSecurity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.web.AuthenticationEntryPoint;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.AuthenticationFailureHandler;
import org.springframework.security.web.authentication.ExceptionMappingAuthenticationFailureHandler;
import org.springframework.security.web.authentication.www.BasicAuthenticationFilter;
import org.springframework.security.web.header.writers.ReferrerPolicyHeaderWriter.ReferrerPolicy;
import org.springframework.security.web.header.writers.StaticHeadersWriter;

/**
 * Who may do what. Two filter chains:
 *
 * <ul>
 *   <li>{@code /api/**}: stateless, HTTP basic or {@code Authorization: Bearer}, no CSRF (no cookies
 *       are used), refusals as problem+json;
 *   <li>everything else (the dashboard, Swagger UI, {@code /v3/api-docs}, actuator): a session with
 *       form login at {@code /login}, CSRF on, HTTP basic accepted too (for curl on the API docs).
 * </ul>
 *
 * <p>Which role each action needs is stated once, in {@link RoleRules}, for both chains. Only the
 * login page, {@code /actuator/health} (its status; details need viewer) and static assets
 * ({@code /css}, {@code /js}, {@code /webjars}, {@code /images}, {@code /favicon.ico}) are
 * anonymous. Password logins (form and HTTP basic) go through {@link LoginThrottle}, then a cache
 * of recent successes, then the password check, which costs the same for unknown user names
 * ({@link ServerUsers#userOrDecoy}). Security headers: a Content-Security-Policy without inline scripts,
 * {@code X-Frame-Options: DENY}, {@code nosniff}, a same-origin referrer policy and a restrictive
 * Permissions-Policy. Both chains record state-changing requests in the audit log ({@link AuditConfig}).
 */
@Configuration
@EnableMethodSecurity
@EnableConfigurationProperties(ServerSecurityProperties.class)
public class SecurityConfig {
    /** The Content-Security-Policy of every response: scripts only from this server, never inline. */
    public static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            + "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
            + "base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

    private static final String[] ANONYMOUS = {
        "/login",
        "/actuator/health",
        "/actuator/health/**",
        "/css/**",
        "/js/**",
        "/webjars/**",
        "/images/**",
        "/favicon.ico"
    };

    /** @return the encoder of configured passwords: {@code {bcrypt}}, {@code {noop}} and the other Spring ids */
    @Bean
    public PasswordEncoder passwordEncoder() {
        return PasswordEncoderFactories.createDelegatingPasswordEncoder();
    }

    /**
     * @param users the server's users
     * @return them for form login and HTTP basic; read-only (no password upgrades: configured
     *     {@code {noop}} passwords stay as they are)
     */
    @Bean
    public UserDetailsService userDetailsService(ServerUsers users) {
        UserDetailsService manager = users.userDetailsService();
        return manager::loadUserByUsername;
    }

    /**
     * @param users the users, with a decoy for unknown names
     * @param passwordEncoder checks their passwords
     * @param throttle refuses throttled names and addresses first
     * @return the password check of form login and HTTP basic: throttled attempts refused unchecked,
     *     successes remembered for a few minutes so bcrypt is not paid on every API request
     */
    @Bean
    public AuthenticationProvider authenticationProvider(
            ServerUsers users, PasswordEncoder passwordEncoder, LoginThrottle throttle) {
        DaoAuthenticationProvider dao = new DaoAuthenticationProvider(users::userOrDecoy);
        dao.setPasswordEncoder(passwordEncoder);
        return new ThrottlingAuthenticationProvider(throttle, new CachingPasswordAuthenticationProvider(dao));
    }

    /**
     * The API chain.
     *
     * @param http the builder
     * @param users for bearer tokens
     * @param problems 401 and 403 as problem+json
     * @return the chain of {@code /api/**}
     * @throws Exception if Spring Security cannot build it
     */
    @Bean
    @Order(1)
    public SecurityFilterChain apiChain(HttpSecurity http, ServerUsers users, ProblemResponses problems)
            throws Exception {
        http.securityMatcher("/api/**")
                .authorizeHttpRequests(RoleRules::apply)
                .httpBasic(b -> b.authenticationEntryPoint(problems))
                .addFilterBefore(new BearerTokenFilter(users, problems), BasicAuthenticationFilter.class)
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .csrf(c -> c.disable())
                .requestCache(r -> r.disable())
                .exceptionHandling(e -> e.authenticationEntryPoint(problems).accessDeniedHandler(problems))
                .headers(SecurityConfig::headers);
        AuditConfig.recordIn(http);
        return http.build();
    }

    /**
     * The browser chain: dashboard pages, login, Swagger UI, API docs and actuator.
     *
     * @param http the builder
     * @param users for bearer tokens
     * @param problems 401 (for non-browser clients) and 403 as problem+json
     * @return the chain of every path outside {@code /api}
     * @throws Exception if Spring Security cannot build it
     */
    @Bean
    @Order(2)
    public SecurityFilterChain browserChain(HttpSecurity http, ServerUsers users, ProblemResponses problems)
            throws Exception {
        AuthenticationEntryPoint entryPoint = (request, response, e) -> {
            if (wantsHtml(request)) {
                response.sendRedirect(request.getContextPath() + "/login");
            } else {
                problems.commence(request, response, e);
            }
        };
        http.authorizeHttpRequests(a -> {
                    a.dispatcherTypeMatchers(DispatcherType.ERROR).permitAll();
                    a.requestMatchers(ANONYMOUS).permitAll();
                    RoleRules.apply(a);
                })
                .formLogin(f ->
                        f.loginPage("/login").failureHandler(loginFailures()).permitAll())
                .logout(l -> l.permitAll())
                .httpBasic(b -> b.authenticationEntryPoint(problems))
                .addFilterBefore(new BearerTokenFilter(users, problems), BasicAuthenticationFilter.class)
                .exceptionHandling(e -> e.authenticationEntryPoint(entryPoint).accessDeniedHandler(problems))
                .headers(SecurityConfig::headers);
        AuditConfig.recordIn(http);
        return http.build();
    }

    /** The login form's failures: the page's throttling message, or its wrong-password message. */
    private static AuthenticationFailureHandler loginFailures() {
        ExceptionMappingAuthenticationFailureHandler handler = new ExceptionMappingAuthenticationFailureHandler();
        handler.setDefaultFailureUrl("/login?error");
        handler.setExceptionMappings(Map.of(LoginThrottledException.class.getName(), "/login?throttled"));
        return handler;
    }

    private static void headers(
            org.springframework.security.config.annotation.web.configurers.HeadersConfigurer<HttpSecurity> h) {
        h.contentSecurityPolicy(c -> c.policyDirectives(CSP))
                .frameOptions(f -> f.deny())
                .referrerPolicy(r -> r.policy(ReferrerPolicy.SAME_ORIGIN))
                .addHeaderWriter(new StaticHeadersWriter(
                        "Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()"));
    }

    private static boolean wantsHtml(HttpServletRequest request) {
        String accept = request.getHeader(HttpHeaders.ACCEPT);
        if (accept == null) {
            return false;
        }
        try {
            return MediaType.parseMediaTypes(accept).stream()
                    .anyMatch(m -> !m.isWildcardType() && m.isCompatibleWith(MediaType.TEXT_HTML));
        } catch (RuntimeException e) {
            return false;
        }
    }
}
