package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The fuzz suite on MariaDB (see {@link ServerTestDatabase}). */
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
}
