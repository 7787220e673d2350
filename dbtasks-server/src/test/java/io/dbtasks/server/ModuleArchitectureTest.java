package io.dbtasks.server;

import io.dbtasks.testing.ModuleRules;
import org.junit.jupiter.api.Test;

/** The rules every module outside the core keeps: no core internals, no package cycles. */
class ModuleArchitectureTest {
    @Test
    void usesNoCoreInternalsAndHasNoPackageCycles() {
        ModuleRules.check("io.dbtasks.server");
    }
}
