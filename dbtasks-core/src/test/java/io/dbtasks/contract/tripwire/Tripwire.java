package io.dbtasks.contract.tripwire;

/**
 * A class no test code refers to except by its name as text: its static initializer records that it
 * was loaded and initialised, so a test can prove that nothing resolved it from stored text. Do not
 * reference this class in code.
 */
public final class Tripwire {
    static {
        TripwireLog.loaded("io.dbtasks.contract.tripwire.Tripwire");
    }

    public Tripwire() {
        TripwireLog.loaded("io.dbtasks.contract.tripwire.Tripwire#new");
    }
}
