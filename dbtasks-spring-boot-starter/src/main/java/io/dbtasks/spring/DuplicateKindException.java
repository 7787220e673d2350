package io.dbtasks.spring;

import java.util.List;

/**
 * Thrown at startup when more than one handler claims the same kind: {@link KindHandler} beans,
 * {@link TaskListener @TaskListener} methods or {@code @TaskListener} beans, in any mix. Each kind must
 * have exactly one handler, or tasks of that kind would run different code depending on which bean
 * won.
 */
public class DuplicateKindException extends IllegalStateException {
    private final String kind;
    private final List<String> beanNames;

    /**
     * @param kind the kind claimed more than once
     * @param beanNames the declarations that claim it (bean name, class, method), in registration order
     */
    public DuplicateKindException(String kind, List<String> beanNames) {
        super("Task kind '" + kind + "' has more than one handler: "
                + String.join(", ", beanNames)
                + ". Each kind must have exactly one handler; rename the kind of one of them or remove one.");
        this.kind = kind;
        this.beanNames = List.copyOf(beanNames);
    }

    /** @return the kind claimed more than once */
    public String kind() {
        return kind;
    }

    /** @return the beans that claim it, as {@code name (class)} */
    public List<String> beanNames() {
        return beanNames;
    }
}
