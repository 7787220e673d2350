package io.dbtasks;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The layering of the core, enforced: the API does not lean on the engine, and no Spring anywhere. */
class ArchitectureTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.dbtasks");

    @Test
    void coreNeverImportsSpring() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.springframework..")
                .check(CORE);
    }

    @Test
    void apiTypesOtherThanTheEntryPointDoNotUseInternals() {
        // DbTasks wires the engine; every other public type is a plain value, interface or exception.
        noClasses()
                .that()
                .resideInAPackage("io.dbtasks")
                .and()
                .doNotHaveSimpleName("DbTasks")
                .and()
                .doNotHaveFullyQualifiedName("io.dbtasks.DbTasks$Builder")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.internal..")
                .check(CORE);
    }

    @Test
    void dialectSeamDoesNotReachIntoTheEngine() {
        noClasses()
                .that()
                .resideInAPackage("io.dbtasks.internal.dialect..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.internal")
                .check(CORE);
    }
}
