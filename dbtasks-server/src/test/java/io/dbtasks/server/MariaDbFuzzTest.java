package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A shorter fuzz run on MariaDB (3,000 requests unless {@code -Ddbtasks.fuzz.requests} says
 * otherwise): NUL, lone surrogates and far-away times are refused here too before the database.
 */
class MariaDbFuzzTest extends FuzzContract {
    private static String url;

    @BeforeAll
    static void requireDatabase() {
        url = ServerTestDatabase.prepare(TestDatabase.MARIADB);
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> url);
    }

    @Override
    int requests() {
        return Integer.getInteger("dbtasks.fuzz.requests", 3_000);
    }
}
