package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Payloads hidden from viewers on PostgreSQL (see {@link ServerTestDatabase}). */
class PostgresPayloadVisibilityTest extends PayloadVisibilityContract {
    private static String url;

    @BeforeAll
    static void requireDatabase() {
        url = ServerTestDatabase.prepare(TestDatabase.POSTGRESQL);
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> url);
    }
}
