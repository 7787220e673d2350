package io.dbtasks.embedding;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The embedded server on POSTGRESQL. */
class PostgresEmbeddedServerTest extends EmbeddedServerContract {
    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.POSTGRESQL.required(), "POSTGRESQL is not in dbtasks.test.databases");
        TestDatabase.POSTGRESQL.clear();
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> TestDatabase.POSTGRESQL.url());
    }
}
