package io.dbtasks.workflow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dbtasks.TaskRequest;
import org.junit.jupiter.api.Test;

class WorkflowTest {
    private static final TaskRequest R = TaskRequest.of("step", null);

    @Test
    void stepsComeInDependencyOrder() {
        Workflow w = Workflow.named("w")
                .step("c", R, "b")
                .step("b", R, Dependency.on("a").runAnyway())
                .step("a", R)
                .build();
        assertThat(w.steps()).extracting(Workflow.Step::name).containsExactly("a", "b", "c");
        assertThat(w.steps().get(1).dependencies()).containsExactly(new Dependency("a", Dependency.OnFailure.RUN));
    }

    @Test
    void aCycleIsRefusedAndNamed() {
        assertThatThrownBy(() -> Workflow.named("loop")
                        .step("start", R)
                        .step("a", R, "start", "c")
                        .step("b", R, "a")
                        .step("c", R, "b")
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Workflow 'loop' has a cycle: ")
                .hasMessageContaining("a -> b -> c -> a");
    }

    @Test
    void aStepThatDependsOnItselfOrOnAMissingStepIsRefused() {
        assertThatThrownBy(() -> Workflow.named("w").step("a", R, "a"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("depends on itself");
        assertThatThrownBy(() -> Workflow.named("w").step("a", R, "x").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("depends on 'x', which the workflow does not have");
        assertThatThrownBy(() -> Workflow.named("w").step("a", R).step("a", R))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("two steps named 'a'");
        assertThatThrownBy(() -> Workflow.named("w").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has no steps");
    }

    @Test
    void aStepWithAnIdempotencyKeyIsRefused() {
        TaskRequest keyed = TaskRequest.builder("step").idempotencyKey("k").build();
        assertThatThrownBy(() -> Workflow.named("w").step("a", keyed))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("idempotency key");
    }
}
