package io.dbtasks.job;

/**
 * Calls the method a job definition names. The core knows no beans: the application supplies an
 * invoker with {@link io.dbtasks.DbTasks.Builder#jobTargets(JobTargetInvoker)}; {@link
 * JobMethodRegistry} is the plain-Java one, and the Spring starter registers one built from
 * {@code @TaskMethod} methods and configuration.
 *
 * <p>An invoker must resolve only targets the application allow-listed, and must never load or
 * instantiate a class by a name from the definition (CWE-470, CWE-502). Implementations are called
 * on worker threads, many at once, and must be thread-safe.
 */
@FunctionalInterface
public interface JobTargetInvoker {
    /**
     * Calls the target with the arguments.
     *
     * @param invocation the definition's target, arguments and the task's context
     * @throws JobTargetNotAllowedException if the target is not allow-listed; the task fails at once
     * @throws InvalidJobArgumentsException if the arguments do not bind to the target's parameters;
     *     the task fails at once
     * @throws Exception what the target threw; the attempt fails and is retried per the definition
     */
    void invoke(JobInvocation invocation) throws Exception;

    /**
     * The targets this invoker calls, each as {@link JobTarget#toString()} ({@code
     * bean.method(type, ...)}), so that the engine claims only the job runs it can call and leaves
     * runs of other targets, untouched, to engines that allow-list them. Read at start and at every
     * heartbeat, so a target registered later is claimed from then on.
     *
     * @return the allow-listed targets; empty (the default) where the invoker cannot list them: the
     *     engine then claims every job run of its queues
     */
    default java.util.Optional<java.util.Set<String>> allowListedTargets() {
        return java.util.Optional.empty();
    }
}
