package io.dbtasks.internal.job;

import io.dbtasks.NonRetryableException;
import io.dbtasks.TaskContext;
import io.dbtasks.TaskHandler;
import io.dbtasks.job.JobDefinitions;
import io.dbtasks.job.JobInvocation;
import io.dbtasks.job.JobTarget;
import io.dbtasks.job.JobTargetInvoker;

/** Runs a {@code dbtasks.job} task: hands the stored target and arguments to the invoker. */
public final class JobTaskHandler implements TaskHandler<JobTaskPayload> {
    private final JobTargetInvoker invoker;

    /** @param invoker the application's invoker, or {@code null} when it supplied none */
    public JobTaskHandler(JobTargetInvoker invoker) {
        this.invoker = invoker;
    }

    @Override
    public void handle(TaskContext context, JobTaskPayload p) throws Exception {
        if (invoker == null) {
            throw new NonRetryableException(
                    "This engine has no job target invoker, so task kind '" + JobDefinitions.KIND
                            + "' cannot call " + p.bean() + "." + p.method() + "; build it with"
                            + " DbTasks.builder(...).jobTargets(new JobMethodRegistry()...) and run the job again");
        }
        JobTarget target;
        try {
            target = new JobTarget(
                    p.bean(), p.method(), p.parameterTypes() == null ? java.util.List.of() : p.parameterTypes());
        } catch (RuntimeException e) {
            throw new NonRetryableException("Job '" + p.code() + "' names an invalid target: " + e.getMessage(), e);
        }
        invoker.invoke(new JobInvocation(p.code(), p.businessType(), p.businessId(), target, p.arguments(), context));
    }
}
