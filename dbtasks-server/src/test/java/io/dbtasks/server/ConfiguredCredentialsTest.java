package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Credentials as an operator configures them, on H2 and PostgreSQL: an admin password that begins
 * with {@code {}} is a plain password, not an encoding; a {@code metrics} user (by
 * {@code dbtasks.server.security.metrics-password} or a configured user with the role) scrapes
 * {@code /actuator/prometheus} and can do nothing else.
 */
class ConfiguredCredentialsTest {
    private static final String TOKEN = "metrics-token-0123456789abcdef";

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql"})
    void anAdminPasswordInBracesIsAPlainPasswordAndMetricsPasswordAddsAScraper(String database) {
        try (ConfigurableApplicationContext ctx = start(
                database,
                "--dbtasks.server.security.admin-password={my-secret}",
                "--dbtasks.server.security.metrics-password=scrape-secret")) {
            RawHttp http = new RawHttp(port(ctx));
            assertThat(get(http, "/api/stats", RawHttp.basic("admin", "{my-secret}"))
                            .status())
                    .isEqualTo(200);
            RawHttp.Response wrong = get(http, "/api/stats", RawHttp.basic("admin", "my-secret"));
            assertThat(wrong.status()).isEqualTo(401);
            assertThat(wrong.body()).doesNotContain("Exception", "java.");
            assertOnlyScrapes(http, RawHttp.basic("metrics", "scrape-secret"), RawHttp.basic("admin", "{my-secret}"));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"h2", "postgresql"})
    void aConfiguredUserWithTheMetricsRoleOnlyScrapes(String database) {
        try (ConfigurableApplicationContext ctx = start(
                database,
                "--dbtasks.server.security.users[0].name=ann",
                "--dbtasks.server.security.users[0].password={noop}ann-secret",
                "--dbtasks.server.security.users[0].roles=admin",
                "--dbtasks.server.security.users[1].name=prometheus",
                "--dbtasks.server.security.users[1].roles=metrics",
                "--dbtasks.server.security.users[1].tokens=" + TOKEN)) {
            RawHttp http = new RawHttp(port(ctx));
            assertOnlyScrapes(http, "Bearer " + TOKEN, RawHttp.basic("ann", "ann-secret"));
        }
    }

    private static void assertOnlyScrapes(RawHttp http, String scraper, String admin) {
        RawHttp.Response scrape = get(http, "/actuator/prometheus", scraper);
        assertThat(scrape.status()).as(scrape.body()).isEqualTo(200);
        assertThat(scrape.body()).contains("dbtasks_");
        assertThat(get(http, "/actuator/prometheus", admin).status()).isEqualTo(200);
        assertThat(get(http, "/actuator/prometheus", null).status()).isEqualTo(401);
        List<String> reached = new ArrayList<>();
        for (String path :
                List.of("/api/stats", "/api/tasks", "/actuator/dbtasks", "/", "/dashboard/tasks", "/v3/api-docs")) {
            int status = get(http, path, scraper).status();
            if (status != 403) {
                reached.add(path + " " + status);
            }
        }
        RawHttp.Response post = http.send(
                "POST",
                "/api/tasks",
                Map.of("Authorization", scraper, "Content-Type", "application/json"),
                "{\"kind\":\"order.no-param\"}".getBytes(StandardCharsets.UTF_8));
        if (post.status() != 403) {
            reached.add("POST /api/tasks " + post.status());
        }
        assertThat(reached)
                .as("what the metrics user reached besides the scrape")
                .isEmpty();
        // Health: status only, as for anonymous callers.
        assertThat(get(http, "/actuator/health", scraper).body()).doesNotContain("components");
    }

    private static ConfigurableApplicationContext start(String database, String... extra) {
        String url;
        if (database.equals("h2")) {
            Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
            url = "jdbc:h2:mem:creds-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        } else {
            url = ServerTestDatabase.prepare(TestDatabase.POSTGRESQL);
        }
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.datasource.url=" + url,
                "--dbtasks.server.seed-demo-jobs=false",
                "--dbtasks.queues.default=1",
                "--spring.datasource.hikari.maximum-pool-size=3"));
        args.addAll(List.of(extra));
        return new SpringApplicationBuilder(DbTasksServerApplication.class).run(args.toArray(String[]::new));
    }

    private static int port(ConfigurableApplicationContext ctx) {
        return Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
    }

    private static RawHttp.Response get(RawHttp http, String path, String authorization) {
        return http.send("GET", path, authorization == null ? Map.of() : Map.of("Authorization", authorization), null);
    }
}
