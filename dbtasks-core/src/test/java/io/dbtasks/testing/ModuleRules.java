package io.dbtasks.testing;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

/**
 * The architecture rules every module outside the core checks on its own classes: it uses the
 * core's public API and {@code io.dbtasks.lock.spi}, never {@code io.dbtasks.internal}, and its
 * packages have no cycles.
 */
public final class ModuleRules {
    private ModuleRules() {}

    /**
     * Checks the rules on the main classes under {@code modulePackage}.
     *
     * @param modulePackage the module's root package, e.g. {@code io.dbtasks.redis}
     * @throws AssertionError listing every violation
     */
    public static void check(String modulePackage) {
        JavaClasses classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages(modulePackage);
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.dbtasks.internal..")
                .because("modules outside the core use its public API and io.dbtasks.lock.spi only")
                .check(classes);
        slices().matching("io.dbtasks.(**)")
                .should()
                .beFreeOfCycles()
                .allowEmptyShould(true)
                .check(classes);
    }
}
