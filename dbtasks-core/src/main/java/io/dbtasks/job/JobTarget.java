package io.dbtasks.job;

import java.util.List;
import java.util.Objects;

/**
 * The method a job definition calls: a bean (a name the {@link JobTargetInvoker} knows, such as a
 * Spring bean name), a method name and the method's parameter types as written in Java ({@code
 * java.lang.Long}, {@code long}, {@code com.example.OrderDto}). These are text compared with the
 * allow-listed methods' declared types; no class is ever loaded by these names.
 *
 * @param bean the bean name, 1 to 200 characters
 * @param method the method name, 1 to 200 characters
 * @param parameterTypes the declared parameter types' names, in order; empty for none
 */
public record JobTarget(String bean, String method, List<String> parameterTypes) {
    /**
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if a name is blank, longer than 200 characters or holds a
     *     control character or lone surrogate
     */
    public JobTarget {
        requireName(bean, "bean");
        requireName(method, "method");
        parameterTypes = List.copyOf(Objects.requireNonNull(parameterTypes, "parameterTypes"));
        for (String t : parameterTypes) {
            requireName(t, "parameter type");
        }
    }

    /**
     * @param bean the bean name
     * @param method the method name
     * @param parameterTypes the declared parameter types' names
     * @return the target
     */
    public static JobTarget of(String bean, String method, String... parameterTypes) {
        return new JobTarget(bean, method, List.of(parameterTypes));
    }

    /** @return {@code bean.method(type, ...)}, the form messages and configuration use */
    @Override
    public String toString() {
        return bean + "." + method + "(" + String.join(", ", parameterTypes) + ")";
    }

    private static void requireName(String value, String what) {
        Objects.requireNonNull(value, what);
        io.dbtasks.StoredText.requireName(what, value);
        if (value.isBlank() || value.length() > 200) {
            throw new IllegalArgumentException(what + " must be 1 to 200 characters and not blank: '" + value + "'");
        }
    }
}
