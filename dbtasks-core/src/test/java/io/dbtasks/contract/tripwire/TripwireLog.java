package io.dbtasks.contract.tripwire;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Where {@link Tripwire} records its loading; a separate class, so reading it loads no tripwire. */
public final class TripwireLog {
    /** The fully qualified name of the tripwire, the only way tests may name it. */
    public static final String TRIPWIRE = "io.dbtasks.contract.tripwire.Tripwire";

    private static final List<String> EVENTS = new CopyOnWriteArrayList<>();

    private TripwireLog() {}

    static void loaded(String what) {
        EVENTS.add(what);
    }

    /** @return what the tripwire recorded: its class initialisation and any instantiation */
    public static List<String> events() {
        return List.copyOf(EVENTS);
    }
}
