package io.dbtasks.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.dbtasks.server.audit.AuditLog;
import io.dbtasks.server.demo.DemoOrderBatch;
import io.dbtasks.server.idempotency.IdempotencyStore;
import io.dbtasks.server.security.ServerUsers;
import io.dbtasks.server.store.ServerSchema;
import io.dbtasks.testing.ModuleRules;
import org.junit.jupiter.api.Test;

/**
 * The rules every module outside the core keeps (no core internals, no package cycles), and the
 * server's own: it reads and changes the dbtasks tables through the core's API only. JDBC is for the
 * stores of the server's own tables (its migrations), and the demo's sample order table.
 */
class ModuleArchitectureTest {
    @Test
    void usesNoCoreInternalsAndHasNoPackageCycles() {
        ModuleRules.check("io.dbtasks.server");
    }

    @Test
    void onlyTheStoresOfTheServersOwnTablesUseJdbc() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("io.dbtasks.server");
        noClasses()
                .that()
                .doNotBelongToAnyOf(
                        AuditLog.class,
                        IdempotencyStore.class,
                        ServerUsers.class,
                        ServerSchema.class,
                        DemoOrderBatch.class)
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("java.sql..", "javax.sql..", "org.springframework.jdbc..")
                .because("the server reads and changes the dbtasks tables through DbTasks; JDBC is for"
                        + " the server's own tables (audit, idempotency, users, their migrations) and the"
                        + " demo's sample orders")
                .check(classes);
    }
}
