package io.dbtasks.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.dbtasks.testing.TestDatabase;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The first start without configured users: an {@code admin} with a generated password, printed
 * once; a restart on the same H2 file prints nothing new and the password still works; and
 * {@code dbtasks.server.security.admin-password} sets it instead.
 */
@ExtendWith(OutputCaptureExtension.class)
class GeneratedAdminTest {
    private static final Pattern PRINTED =
            Pattern.compile("Generated password of user 'admin' \\(role admin\\): (\\S+)");

    @TempDir
    Path dir;

    @Test
    void firstStartPrintsAGeneratedPasswordOnceAndARestartKeepsIt(CapturedOutput output) {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
        String password;
        try (ConfigurableApplicationContext first = start()) {
            Matcher m = PRINTED.matcher(output.getOut());
            assertThat(m.find()).as("password printed at first start").isTrue();
            password = m.group(1);
            assertThat(password).hasSize(24);
            assertThat(m.find()).as("printed once").isFalse();
            RawHttp http = new RawHttp(port(first));
            assertThat(stats(http, password)).isEqualTo(200);
            assertThat(stats(http, "admin")).isEqualTo(401);
            assertThat(stats(http, "")).isEqualTo(401);
        }
        int printedBefore = count(output.getOut());
        try (ConfigurableApplicationContext second = start()) {
            assertThat(count(output.getOut())).as("no new password at restart").isEqualTo(printedBefore);
            assertThat(stats(new RawHttp(port(second)), password)).isEqualTo(200);
        }
    }

    @Test
    void adminPasswordPropertySetsThePasswordAndNothingIsPrinted(CapturedOutput output) {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
        try (ConfigurableApplicationContext ctx = start("--dbtasks.server.security.admin-password=s3cret-for-curl")) {
            assertThat(count(output.getOut())).isZero();
            RawHttp http = new RawHttp(port(ctx));
            assertThat(stats(http, "s3cret-for-curl")).isEqualTo(200);
            assertThat(stats(http, "wrong")).isEqualTo(401);
        }
    }

    private ConfigurableApplicationContext start(String... extra) {
        String[] args = new String[extra.length + 4];
        args[0] = "--server.port=0";
        args[1] =
                "--spring.datasource.url=jdbc:h2:file:" + dir.resolve("dbtasks").toAbsolutePath();
        args[2] = "--dbtasks.server.seed-demo-jobs=false";
        args[3] = "--dbtasks.queues.default=1";
        System.arraycopy(extra, 0, args, 4, extra.length);
        return new SpringApplicationBuilder(DbTasksServerApplication.class).run(args);
    }

    private static int port(ConfigurableApplicationContext ctx) {
        return Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
    }

    private static int stats(RawHttp http, String password) {
        return http.send("GET", "/api/stats", Map.of("Authorization", RawHttp.basic("admin", password)), null)
                .status();
    }

    private static int count(String out) {
        Matcher m = PRINTED.matcher(out);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
