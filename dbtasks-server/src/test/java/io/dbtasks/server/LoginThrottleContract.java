package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;
import tools.jackson.databind.json.JsonMapper;

/**
 * Login throttling, run once per database by the subclasses: after a few wrong passwords for one
 * user name, or many from one address, further attempts are refused without checking the password
 * (429 with {@code Retry-After} over HTTP basic, the login page's error for the form), even with
 * the right password; failures are counted and logged; a wrong password costs the same for an
 * unknown user, a {@code {noop}} user and a bcrypt user.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "dbtasks.server.seed-demo-jobs=false",
            "spring.datasource.hikari.maximum-pool-size=6",
            "dbtasks.server.security.login-throttle.max-failures-per-user=3",
            "dbtasks.server.security.login-throttle.max-failures-per-address=10",
            "dbtasks.server.security.login-throttle.max-failures-per-user-all-addresses=8",
            "dbtasks.server.security.login-throttle.window=10m"
        })
@TestPropertySource(locations = "classpath:test-users-throttle.properties")
@ExtendWith(OutputCaptureExtension.class)
@DirtiesContext
abstract class LoginThrottleContract {
    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    @Autowired
    JsonMapper mapper;

    RawHttp http;
    final String run = UUID.randomUUID().toString().substring(0, 8);

    /** Each test calls from an address of its own (all of 127/8 is loopback), so their counts do not mix. */
    private static final java.util.concurrent.atomic.AtomicInteger ADDRESS =
            new java.util.concurrent.atomic.AtomicInteger(10);

    String address;

    @BeforeEach
    void client() {
        address = "127.0.0." + ADDRESS.incrementAndGet();
        http = new RawHttp(port).from(address);
    }

    @Test
    void basicIsThrottledPerUserNameWithoutCheckingThePassword() {
        double before = failures();
        long checked = Long.MAX_VALUE; // the fastest checked wrong password: one bcrypt of cost 9
        for (int i = 0; i < 3; i++) {
            long t = System.nanoTime();
            assertThat(stats("slow", "wrong-" + i).status()).isEqualTo(401);
            checked = Math.min(checked, (System.nanoTime() - t) / 1_000_000);
        }
        long start = System.nanoTime();
        RawHttp.Response throttled = stats("slow", "slow-secret");
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(throttled.status()).as(throttled.body()).isEqualTo(429);
        assertThat(throttled.contentType()).startsWith("application/problem+json");
        assertThat(throttled.header("Retry-After")).matches("[1-9][0-9]*");
        assertThat(mapper.readTree(throttled.body()).path("detail").asString()).contains("Too many failed logins");
        // No bcrypt of cost 9 was paid for it: it took well under a checked password's time.
        assertThat(millis)
                .as("throttled answer took %d ms, a checked wrong password %d ms", millis, checked)
                .isLessThan(checked / 2);
        // Another user from the same address is not held up.
        assertThat(stats("operator", "operator-secret").status()).isEqualTo(200);
        assertThat(failures() - before).isGreaterThanOrEqualTo(3);
    }

    @Test
    void formLoginIsThrottledToTheLoginPagesError() {
        for (int i = 0; i < 3; i++) {
            assertThat(formLogin("viewer", "wrong-" + i)).contains("/login?error");
        }
        String location = formLogin("viewer", "viewer-secret");
        assertThat(location).as("the right password while throttled").contains("/login?");
        assertThat(location).doesNotEndWith("/");
        RawHttp.Response page = http.send("GET", location.substring(location.indexOf("/login")), Map.of(), null);
        assertThat(page.body()).contains("Too many failed logins");
    }

    @Test
    void aSuccessfulLoginForgetsTheNamesFailures() {
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 2; i++) {
                assertThat(stats("operator2", "wrong-" + i).status()).isEqualTo(401);
            }
            assertThat(stats("operator2", "operator2-secret").status()).isEqualTo(200);
        }
    }

    @Test
    void failuresFromOneAddressDoNotLockTheNameOutElsewhere() {
        for (int i = 0; i < 3; i++) {
            assertThat(stats("target", "wrong-" + i).status()).isEqualTo(401);
        }
        assertThat(stats("target", "target-secret").status())
                .as("the guessing address")
                .isEqualTo(429);
        RawHttp owner = new RawHttp(port).from("127.0.1." + ADDRESS.incrementAndGet());
        assertThat(stats(owner, "target", "target-secret").status())
                .as("the name's owner from another address")
                .isEqualTo(200);
    }

    @Test
    void guessesSpreadOverAddressesThrottleTheNameExceptWhereItLoggedInBefore() {
        RawHttp owner = new RawHttp(port).from("127.0.2." + ADDRESS.incrementAndGet());
        assertThat(stats(owner, "target2", "target2-secret").status()).isEqualTo(200);
        for (int a = 0; a < 4; a++) {
            RawHttp guesser = new RawHttp(port).from("127.0.3." + ADDRESS.incrementAndGet());
            for (int i = 0; i < 2; i++) {
                assertThat(stats(guesser, "target2", "wrong-" + i).status()).isEqualTo(401);
            }
        }
        RawHttp fresh = new RawHttp(port).from("127.0.3." + ADDRESS.incrementAndGet());
        assertThat(stats(fresh, "target2", "target2-secret").status())
                .as("a new address once the name failed 8 times across addresses")
                .isEqualTo(429);
        assertThat(stats(owner, "target2", "target2-secret").status())
                .as("the address the name logged in from before")
                .isEqualTo(200);
    }

    @Test
    void oneAddressIsThrottledAcrossUserNames() {
        for (int i = 0; i < 10; i++) {
            assertThat(stats("nobody-" + i + "-" + run, "x").status()).isEqualTo(401);
        }
        RawHttp.Response r = stats("admin", "admin-secret");
        assertThat(r.status()).isEqualTo(429);
    }

    @Test
    void failedLoginsAreLoggedWithTheAddressAndASanitizedName(CapturedOutput output) {
        assertThat(stats("mallory\nFORGED LINE " + run, "x").status()).isEqualTo(401);
        assertThat(output.getOut())
                .contains("Failed login", address, "FORGED LINE " + run)
                .doesNotContain("\nFORGED LINE " + run);
    }

    @Test
    void aWrongPasswordCostsTheSameForUnknownNoopAndBcryptUsers() {
        long bcrypt = fastest("slow2");
        long noop = fastest("admin");
        long unknown = fastest("nobody-" + run);
        assertThat(noop).as("noop %d ms vs bcrypt %d ms", noop, bcrypt).isGreaterThan(bcrypt / 2);
        assertThat(unknown).as("unknown %d ms vs bcrypt %d ms", unknown, bcrypt).isBetween(bcrypt / 2, bcrypt * 8 / 5);
    }

    /** The fastest of three wrong-password attempts (the third still below the limit), in milliseconds. */
    private long fastest(String user) {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long start = System.nanoTime();
            assertThat(stats(user, "wrong-" + i).status()).isEqualTo(401);
            best = Math.min(best, (System.nanoTime() - start) / 1_000_000);
        }
        return best;
    }

    private double failures() {
        return meters.find("dbtasks.server.login.failures").counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
    }

    private RawHttp.Response stats(String user, String password) {
        return stats(http, user, password);
    }

    private static RawHttp.Response stats(RawHttp client, String user, String password) {
        return client.send("GET", "/api/stats", Map.of("Authorization", RawHttp.basic(user, password)), null);
    }

    /** @return where the login form's POST redirects */
    private String formLogin(String user, String password) {
        RawHttp.Response page = http.send("GET", "/login", Map.of(), null);
        String cookie = SecurityHardeningContract.sessionCookie(page);
        RawHttp.Response login = http.send(
                "POST",
                "/login",
                Map.of("Cookie", cookie, "Content-Type", "application/x-www-form-urlencoded"),
                ("username=" + user + "&password=" + password + "&_csrf=" + SecurityHardeningContract.csrf(page.body()))
                        .getBytes(StandardCharsets.UTF_8));
        assertThat(login.status()).isEqualTo(302);
        return login.header("Location");
    }
}
