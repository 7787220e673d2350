package io.dbtasks.server.security;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.MediaType;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.util.HtmlUtils;

/**
 * The form-login page at {@code /login}: user name, password and the CSRF token, posted to
 * {@code /login} (Spring Security's login filter). Plain HTML without scripts, so it passes the
 * Content-Security-Policy. A dashboard with templates may replace it by mapping {@code /login} itself.
 */
@Controller
public class LoginPageController {
    /**
     * @param request the request, for {@code ?error}, {@code ?throttled} and {@code ?logout}
     * @param csrf the session's CSRF token, which the form must send back
     * @return the page
     */
    @GetMapping(path = "/login", produces = MediaType.TEXT_HTML_VALUE)
    @ResponseBody
    public String login(HttpServletRequest request, CsrfToken csrf) {
        String message = request.getParameter("throttled") != null
                ? "<p class=\"error\" role=\"alert\">Too many failed logins for this user name or from this"
                        + " address. Try again later.</p>"
                : request.getParameter("error") != null
                        ? "<p class=\"error\" role=\"alert\">Wrong user name or password.</p>"
                        : request.getParameter("logout") != null ? "<p role=\"status\">You are logged out.</p>" : "";
        return """
                <!DOCTYPE html>
                <html lang="en">
                <head>
                <meta charset="utf-8">
                <meta name="viewport" content="width=device-width, initial-scale=1">
                <title>Log in - dbtasks</title>
                <style>
                body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}
                label,input,button{display:block;width:100%%;box-sizing:border-box;margin:.3rem 0}
                input,button{padding:.5rem;font-size:1rem}.error{color:#b00020}
                </style>
                </head>
                <body>
                <h1>dbtasks</h1>
                %s
                <form method="post" action="%s/login">
                <label for="username">User name</label>
                <input id="username" name="username" autocomplete="username" required autofocus>
                <label for="password">Password</label>
                <input id="password" name="password" type="password" autocomplete="current-password" required>
                <input type="hidden" name="%s" value="%s">
                <button type="submit">Log in</button>
                </form>
                </body>
                </html>
                """.formatted(
                        message,
                        HtmlUtils.htmlEscape(request.getContextPath()),
                        HtmlUtils.htmlEscape(csrf.getParameterName()),
                        HtmlUtils.htmlEscape(csrf.getToken()));
    }
}
