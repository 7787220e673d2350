package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Text validation on MARIADB. */
class MariaDbTextValidationTest extends TextValidationContract {
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
