package io.dbtasks.server.security;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Optional;
import org.springframework.http.HttpHeaders;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Authenticates {@code Authorization: Bearer <token>} (RFC 6750) against the tokens configured in
 * {@code dbtasks.server.security.users[].tokens}. An unknown token is a 401 at once; a request
 * without a bearer header passes on unchanged (to HTTP basic, or to the login). Stateless: nothing
 * is kept in a session.
 */
public class BearerTokenFilter extends OncePerRequestFilter {
    private static final String PREFIX = "Bearer ";

    private final ServerUsers users;
    private final ProblemResponses problems;

    /**
     * @param users the users and their tokens
     * @param problems writes the 401
     */
    public BearerTokenFilter(ServerUsers users, ProblemResponses problems) {
        this.users = users;
        this.problems = problems;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String header = request.getHeader(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
            chain.doFilter(request, response);
            return;
        }
        Optional<UserDetails> user =
                users.byToken(header.substring(PREFIX.length()).trim());
        if (user.isEmpty() || !user.get().isEnabled()) {
            response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"dbtasks\", error=\"invalid_token\"");
            problems.write(
                    response,
                    401,
                    "Unauthorized",
                    "The bearer token is not valid; use one of dbtasks.server.security.users[].tokens");
            return;
        }
        SecurityContext context = SecurityContextHolder.createEmptyContext();
        context.setAuthentication(UsernamePasswordAuthenticationToken.authenticated(
                user.get(), null, user.get().getAuthorities()));
        SecurityContextHolder.setContext(context);
        try {
            chain.doFilter(request, response);
        } finally {
            SecurityContextHolder.clearContext();
        }
    }
}
