package io.dbtasks.job;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The allow-list of methods job definitions may call, and the {@link JobTargetInvoker} that calls
 * them: the plain-Java registry (the Spring starter fills one from {@code @TaskMethod} methods).
 *
 * <p>A method is registered with the object it is called on and the name definitions know that
 * object by. A definition's target resolves only to a registered method whose bean name, method name
 * and declared parameter types (their {@link Class#getTypeName()}, such as {@code java.lang.Long}
 * or {@code long[]}) equal the stored text exactly. Nothing is resolved otherwise: no class is
 * loaded, no bean looked up and no method searched for by a stored name (CWE-470), and arguments
 * are read by Jackson only as the registered method's declared (generic) parameter types, never as
 * a type named in the JSON (CWE-502; use a mapper without default typing). Arguments are read
 * strictly whatever the mapper's own setting: a property the parameter's type does not have (a
 * misspelt {@code userNam}) fails the run at once, FAILED with a reason naming the property, instead
 * of calling the method with that field {@code null}; a type annotated
 * {@code @JsonIgnoreProperties(ignoreUnknown = true)} keeps ignoring them.
 *
 * <p>Thread-safe: registrations may happen while jobs run (a registered method becomes callable at
 * once), though applications normally register everything at startup.
 */
public final class JobMethodRegistry implements JobTargetInvoker {
    private record Entry(String beanName, Object bean, Method method, JavaType[] parameterTypes) {}

    private final JsonMapper mapper;
    private final String allowListHint;
    private final Map<String, Entry> bySignature = new ConcurrentHashMap<>();
    private final Map<String, List<String>> signaturesByName = new ConcurrentHashMap<>();

    /**
     * @param mapper reads the arguments; it should not enable default typing
     * @param allowListHint how to allow-list a method in this application, ended by a period; for
     *     example "Register it with JobMethodRegistry.register(...)."
     */
    public JobMethodRegistry(JsonMapper mapper, String allowListHint) {
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        this.allowListHint = Objects.requireNonNull(allowListHint, "allowListHint");
    }

    /** A registry with a default mapper, for applications that register methods in code. */
    public JobMethodRegistry() {
        this(JsonMapper.builder().build(), "Register it with JobMethodRegistry.register(beanName, bean, method).");
    }

    /**
     * Allow-lists {@code method}, called on {@code bean}, under {@code beanName}.
     *
     * @param beanName the name definitions give as {@link JobTarget#bean()}
     * @param bean the object the method is called on
     * @param method a public method of {@code bean}'s class (or an interface or superclass of it)
     * @return this
     * @throws IllegalArgumentException if the method is not public, static, not declared by the
     *     bean's type, or its signature is registered already under this bean name
     */
    public JobMethodRegistry register(String beanName, Object bean, Method method) {
        Objects.requireNonNull(beanName, "beanName");
        Objects.requireNonNull(bean, "bean");
        Objects.requireNonNull(method, "method");
        if (!Modifier.isPublic(method.getModifiers()) || Modifier.isStatic(method.getModifiers())) {
            throw new IllegalArgumentException(
                    "Only public instance methods can be job targets: " + method.toGenericString());
        }
        if (!method.getDeclaringClass().isInstance(bean)) {
            throw new IllegalArgumentException(
                    "Bean '" + beanName + "' (" + bean.getClass().getName() + ") has no method " + method);
        }
        Type[] generic = method.getGenericParameterTypes();
        JavaType[] types = new JavaType[generic.length];
        for (int i = 0; i < generic.length; i++) {
            types[i] = mapper.getTypeFactory().constructType(generic[i]);
        }
        String signature = signature(beanName, method.getName(), typeNames(method));
        if (bySignature.putIfAbsent(signature, new Entry(beanName, bean, method, types)) != null) {
            throw new IllegalArgumentException("Job target " + signature + " is registered already");
        }
        signaturesByName
                .computeIfAbsent(
                        beanName + "." + method.getName(), k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                .add(signature);
        return this;
    }

    /**
     * Allow-lists the public method {@code methodName} of {@code bean} with these parameter classes
     * (compile-time classes of the caller, never names).
     *
     * @param beanName the name definitions use
     * @param bean the object
     * @param methodName the method's name
     * @param parameterTypes its parameter classes
     * @return this
     * @throws IllegalArgumentException if {@code bean} has no such public method
     */
    public JobMethodRegistry register(String beanName, Object bean, String methodName, Class<?>... parameterTypes) {
        try {
            return register(beanName, bean, bean.getClass().getMethod(methodName, parameterTypes));
        } catch (NoSuchMethodException e) {
            throw new IllegalArgumentException(bean.getClass().getName() + " has no public method " + methodName
                    + Arrays.toString(parameterTypes));
        }
    }

    /** @return the allow-listed targets as {@code bean.method(type, ...)}, sorted */
    public List<String> allowed() {
        return bySignature.keySet().stream().sorted().toList();
    }

    /** @return the allow-listed targets as {@code bean.method(type, ...)}, a copy */
    @Override
    public java.util.Optional<java.util.Set<String>> allowListedTargets() {
        return java.util.Optional.of(java.util.Set.copyOf(bySignature.keySet()));
    }

    /**
     * @param target a stored target
     * @return whether it names an allow-listed method exactly
     */
    public boolean isAllowed(JobTarget target) {
        return bySignature.containsKey(signature(target.bean(), target.method(), target.parameterTypes()));
    }

    @Override
    public void invoke(JobInvocation invocation) throws Exception {
        JobTarget target = invocation.target();
        Entry entry = bySignature.get(signature(target.bean(), target.method(), target.parameterTypes()));
        if (entry == null) {
            throw notAllowed(invocation.code(), target);
        }
        Object[] args = bind(invocation.code(), entry, invocation.arguments());
        try {
            entry.method().invoke(entry.bean(), args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        } catch (IllegalArgumentException e) {
            // thrown by Method.invoke itself, before the method ran: a null for a primitive parameter
            throw new InvalidJobArgumentsException(
                    "Job '" + invocation.code() + "': the arguments do not fit " + target + " (" + e.getMessage()
                            + "); give a value for every primitive parameter",
                    e);
        } catch (IllegalAccessException e) {
            throw new JobTargetNotAllowedException("Job '" + invocation.code() + "': " + target
                    + " is allow-listed but not accessible (" + e.getMessage()
                    + "); make the method and its class public");
        }
    }

    private JobTargetNotAllowedException notAllowed(String code, JobTarget target) {
        List<String> sameName = signaturesByName.getOrDefault(target.bean() + "." + target.method(), List.of());
        String why = sameName.isEmpty()
                ? target + " is not an allow-listed job target"
                : target + " does not match the parameter types of the allow-listed " + String.join(" or ", sameName);
        return new JobTargetNotAllowedException("Job '" + code + "': " + why
                + ". A job may only call allow-listed methods; " + allowListHint
                + " Then fix the definition if need be and run it again.");
    }

    private Object[] bind(String code, Entry entry, @Nullable String argumentsJson) {
        JavaType[] types = entry.parameterTypes();
        JsonNode array;
        try {
            array = argumentsJson == null || argumentsJson.isBlank()
                    ? mapper.createArrayNode()
                    : mapper.readTree(argumentsJson);
        } catch (JacksonException e) {
            throw new InvalidJobArgumentsException(
                    "Job '" + code + "': arguments are not valid JSON (" + e.getOriginalMessage()
                            + "); store a JSON array with one element per parameter of "
                            + signature(entry.beanName(), entry.method().getName(), typeNames(entry.method())),
                    e);
        }
        if (array == null || !array.isArray() || array.size() != types.length) {
            throw new InvalidJobArgumentsException(
                    "Job '" + code + "': arguments must be a JSON array of " + types.length + " element(s), one per"
                            + " parameter of "
                            + signature(entry.beanName(), entry.method().getName(), typeNames(entry.method()))
                            + "; got "
                            + (array == null || !array.isArray() ? "no array" : array.size() + " element(s)"),
                    null);
        }
        Object[] args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            try {
                // Strict whatever the application's mapper says: a misspelt property must fail the
                // run, not call the method with that parameter's field left null.
                args[i] = mapper.readerFor(types[i])
                        .with(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                        .readValue(array.get(i));
            } catch (UnrecognizedPropertyException e) {
                throw new InvalidJobArgumentsException(
                        "Job '" + code + "': argument " + (i + 1) + " has the property '" + e.getPropertyName()
                                + "', which " + types[i].toCanonical() + " does not have (known: "
                                + e.getKnownPropertyIds() + "); fix the definition's arguments and run it again",
                        e);
            } catch (JacksonException e) {
                throw new InvalidJobArgumentsException(
                        "Job '" + code + "': argument " + (i + 1) + " cannot be read as " + types[i].toCanonical()
                                + ": " + e.getOriginalMessage() + "; fix the definition's arguments and run it again",
                        e);
            }
        }
        return args;
    }

    private static List<String> typeNames(Method method) {
        List<String> names = new ArrayList<>();
        for (Class<?> c : method.getParameterTypes()) {
            names.add(c.getTypeName());
        }
        return names;
    }

    private static String signature(String bean, String method, List<String> types) {
        return bean + "." + method + "(" + types.stream().collect(Collectors.joining(", ")) + ")";
    }
}
