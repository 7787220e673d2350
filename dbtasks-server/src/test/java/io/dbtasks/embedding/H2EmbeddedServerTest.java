package io.dbtasks.embedding;

import io.dbtasks.testing.TestDatabase;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The embedded server on H2. */
class H2EmbeddedServerTest extends EmbeddedServerContract {
    @BeforeAll
    static void requireDatabase() {
        Assumptions.assumeTrue(TestDatabase.H2.required(), "H2 is not in dbtasks.test.databases");
    }

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> "jdbc:h2:mem:dbtasks_embedded;DB_CLOSE_DELAY=-1");
    }
}
