package io.dbtasks.spring;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.dbtasks.testing.ModuleRules;
import org.junit.jupiter.api.Test;

/**
 * The rules every module outside the core keeps (no core internals, no package cycles), and the
 * starter's own layering: the user API ({@code io.dbtasks.spring}) and the actuator support ({@code
 * io.dbtasks.spring.actuator}) never reach into the auto-configuration, which wires them.
 */
class ModuleArchitectureTest {
    @Test
    void usesNoCoreInternalsAndHasNoPackageCycles() {
        ModuleRules.check("io.dbtasks.spring");
    }

    @Test
    void userApiAndActuatorSupportDoNotDependOnTheAutoConfiguration() {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("io.dbtasks.spring");
        noClasses()
                .that()
                .resideInAnyPackage("io.dbtasks.spring", "io.dbtasks.spring.actuator")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.spring.autoconfigure..")
                .because("the auto-configuration wires the user API and the actuator support, not the other way round")
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage("io.dbtasks.spring.actuator")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.spring")
                .because("the actuator support reads the engine only")
                .check(classes);
    }
}
