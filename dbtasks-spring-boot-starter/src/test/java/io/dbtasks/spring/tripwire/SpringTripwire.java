package io.dbtasks.spring.tripwire;

/** Named only as text by the tests; its static initializer records that something loaded it. */
public final class SpringTripwire {
    static {
        System.setProperty("dbtasks.test.spring-tripwire-loaded", "true");
    }
}
