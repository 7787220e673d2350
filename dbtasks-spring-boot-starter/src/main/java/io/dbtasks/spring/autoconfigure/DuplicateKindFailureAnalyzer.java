package io.dbtasks.spring.autoconfigure;

import io.dbtasks.spring.DuplicateKindException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a {@link DuplicateKindException} into a startup report that says which beans clash. */
class DuplicateKindFailureAnalyzer extends AbstractFailureAnalyzer<DuplicateKindException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DuplicateKindException cause) {
        return new FailureAnalysis(
                "dbtasks task kind '" + cause.kind() + "' has more than one handler: "
                        + String.join(", ", cause.beanNames()) + ".",
                "Give each handler its own kind (KindHandler.kind() or the value of @TaskListener), or remove all but one of these declarations.",
                cause);
    }
}
