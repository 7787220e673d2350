package io.dbtasks.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a {@link DuplicateKindException} into a startup report that says which beans clash. */
class DuplicateKindFailureAnalyzer extends AbstractFailureAnalyzer<DuplicateKindException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DuplicateKindException cause) {
        return new FailureAnalysis(
                "dbtasks task kind '" + cause.kind() + "' is handled by more than one KindHandler bean: "
                        + String.join(", ", cause.beanNames()) + ".",
                "Give each KindHandler bean its own kind(), or remove all but one of these beans.",
                cause);
    }
}
