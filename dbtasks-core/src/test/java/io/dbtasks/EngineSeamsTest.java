package io.dbtasks;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The engine's seams: only the entry point wires the engine, an execution is handed what
 * it needs instead of reaching back into the engine, and the event API stands on its own.
 */
class EngineSeamsTest {
    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.dbtasks");

    @Test
    void onlyTheEntryPointUsesTheEngine() {
        noClasses()
                .that()
                .doNotHaveFullyQualifiedName("io.dbtasks.DbTasks")
                .and()
                .doNotHaveFullyQualifiedName("io.dbtasks.DbTasks$Builder")
                .and()
                .doNotHaveFullyQualifiedName("io.dbtasks.internal.Engine")
                .and()
                .doNotHaveFullyQualifiedName("io.dbtasks.internal.DeferredEngine") // holds it until it is built
                .and()
                .resideOutsideOfPackage("io.dbtasks.internal.Engine$..")
                .should()
                .dependOnClassesThat()
                .haveFullyQualifiedName("io.dbtasks.internal.Engine")
                .check(CORE);
    }

    @Test
    void eventApiDependsOnNothingOfTheEngine() {
        noClasses()
                .that()
                .resideInAPackage("io.dbtasks.event..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.internal..")
                .check(CORE);
    }
}
