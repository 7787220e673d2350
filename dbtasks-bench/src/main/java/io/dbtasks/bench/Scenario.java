package io.dbtasks.bench;

import java.util.List;

/** One measurement of the harness. Each starts from an empty task table and leaves it as it likes. */
interface Scenario {
    /** @return the name given to {@code --scenario} */
    String name();

    /**
     * Measures.
     *
     * @param run the run's configuration and database
     * @return the figures, at least one
     * @throws Exception if the measurement cannot be made; the run stops
     */
    List<Result> run(BenchRun run) throws Exception;
}
