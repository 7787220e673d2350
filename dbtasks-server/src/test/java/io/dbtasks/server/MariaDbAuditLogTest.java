package io.dbtasks.server;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The audit log on MARIADB, in a database of its own next to the core tests' (see {@link ServerTestDatabase}). */
class MariaDbAuditLogTest extends AuditLogContract {
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
