package io.dbtasks.workflow;

import io.dbtasks.TaskRequest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A workflow to insert: named steps, each a {@link TaskRequest}, and the {@link Dependency}
 * edges between them, a directed acyclic graph. Build one with {@link #named(String)} and insert it
 * with {@link Workflows#insert(Workflow)}.
 *
 * <pre>{@code
 * Workflow order = Workflow.named("order 42")
 *         .step("reserve", TaskRequest.of("reserve-stock", reserve))
 *         .step("charge", TaskRequest.of("charge-card", charge))
 *         .step("ship", TaskRequest.of("ship-order", ship), "reserve", "charge")
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe once built; its steps are in an order where each step comes after
 * the steps it depends on.
 */
public final class Workflow {
    /** The longest workflow or step name, in characters. */
    public static final int MAX_NAME_LENGTH = 200;

    /**
     * One step: a task, and the steps it waits for.
     *
     * @param name its name, unique in the workflow
     * @param request the task it runs
     * @param dependencies the steps it waits for; empty for a step that is claimable at once
     */
    public record Step(String name, TaskRequest request, List<Dependency> dependencies) {
        /**
         * @param name its name
         * @param request its task
         * @param dependencies the steps it waits for, copied
         * @throws NullPointerException if an argument is {@code null}
         */
        public Step {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(request, "request");
            dependencies = List.copyOf(dependencies);
        }
    }

    private final String name;
    private final List<Step> steps;

    private Workflow(String name, List<Step> steps) {
        this.name = name;
        this.steps = List.copyOf(steps);
    }

    /**
     * Starts a workflow.
     *
     * @param name a display name, 1 to {@link #MAX_NAME_LENGTH} characters; need not be unique
     * @return a builder, not thread-safe
     * @throws IllegalArgumentException if {@code name} is blank or too long
     */
    public static Builder named(String name) {
        return new Builder(checkName("workflow", name));
    }

    /** @return its display name */
    public String name() {
        return name;
    }

    /** @return its steps, each after the steps it depends on */
    public List<Step> steps() {
        return steps;
    }

    private static String checkName(String what, String name) {
        Objects.requireNonNull(name, what + " name");
        if (name.isBlank() || name.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("A " + what + " name must have 1 to " + MAX_NAME_LENGTH
                    + " characters and not be blank; got '" + name + "'");
        }
        return name;
    }

    /** Collects the steps of a {@link Workflow}; not thread-safe. */
    public static final class Builder {
        private final String name;
        private final Map<String, Step> steps = new LinkedHashMap<>();

        private Builder(String name) {
            this.name = name;
        }

        /**
         * Adds a step with no dependencies: claimable as soon as the workflow commits.
         *
         * @param step its name, unique in the workflow, 1 to {@link #MAX_NAME_LENGTH} characters
         * @param request its task; without an idempotency key (the workflow is inserted whole)
         * @return this builder
         * @throws IllegalArgumentException if the name is taken, blank or too long, or the request
         *     has an idempotency key
         */
        public Builder step(String step, TaskRequest request) {
            return step(step, request, new Dependency[0]);
        }

        /**
         * Adds a step that waits for the named steps to succeed, and is cancelled if one of them
         * fails for good or is cancelled ({@link Dependency#on(String)}).
         *
         * @param step its name, unique in the workflow
         * @param request its task; without an idempotency key
         * @param dependsOn the names of the steps it waits for; they may be added later
         * @return this builder
         * @throws IllegalArgumentException as {@link #step(String, TaskRequest)}
         */
        public Builder step(String step, TaskRequest request, String... dependsOn) {
            return step(
                    step, request, Arrays.stream(dependsOn).map(Dependency::on).toArray(Dependency[]::new));
        }

        /**
         * Adds a step that waits for the given dependencies.
         *
         * @param step its name, unique in the workflow
         * @param request its task; without an idempotency key
         * @param dependsOn the steps it waits for and what their failure does; they may be added later
         * @return this builder
         * @throws IllegalArgumentException as {@link #step(String, TaskRequest)}, or if a step is
         *     named twice in {@code dependsOn} or is its own dependency
         */
        public Builder step(String step, TaskRequest request, Dependency... dependsOn) {
            checkName("step", step);
            Objects.requireNonNull(request, "request");
            if (steps.containsKey(step)) {
                throw new IllegalArgumentException(
                        "Workflow '" + name + "' has two steps named '" + step + "'; step names must be unique");
            }
            if (request.idempotencyKey() != null) {
                throw new IllegalArgumentException("Step '" + step + "' of workflow '" + name
                        + "' has an idempotency key; a workflow is inserted whole, so its steps take none");
            }
            Map<String, Dependency> unique = new LinkedHashMap<>();
            for (Dependency d : dependsOn) {
                Objects.requireNonNull(d, "dependency");
                if (d.step().equals(step)) {
                    throw new IllegalArgumentException("Step '" + step + "' of workflow '" + name
                            + "' depends on itself; a workflow is a graph without cycles");
                }
                if (unique.put(d.step(), d) != null) {
                    throw new IllegalArgumentException(
                            "Step '" + step + "' names its dependency '" + d.step() + "' twice");
                }
            }
            steps.put(step, new Step(step, request, new ArrayList<>(unique.values())));
            return this;
        }

        /**
         * Checks the graph and builds the workflow.
         *
         * @return the workflow, its steps ordered so that each comes after its dependencies
         * @throws IllegalArgumentException if there are no steps, a dependency names a step the
         *     workflow does not have, or the dependencies form a cycle (the message names it)
         */
        public Workflow build() {
            if (steps.isEmpty()) {
                throw new IllegalArgumentException("Workflow '" + name + "' has no steps; add one with step(...)");
            }
            Map<String, Integer> waiting = new HashMap<>();
            Map<String, List<String>> dependents = new HashMap<>();
            for (Step s : steps.values()) {
                waiting.put(s.name(), s.dependencies().size());
                for (Dependency d : s.dependencies()) {
                    if (!steps.containsKey(d.step())) {
                        throw new IllegalArgumentException("Step '" + s.name() + "' of workflow '" + name
                                + "' depends on '" + d.step() + "', which the workflow does not have; add that"
                                + " step or remove the dependency");
                    }
                    dependents.computeIfAbsent(d.step(), k -> new ArrayList<>()).add(s.name());
                }
            }
            // Kahn's algorithm: the steps in dependency order, or what is left over is on a cycle.
            Deque<String> ready = new ArrayDeque<>();
            for (Step s : steps.values()) {
                if (s.dependencies().isEmpty()) {
                    ready.add(s.name());
                }
            }
            List<Step> ordered = new ArrayList<>(steps.size());
            while (!ready.isEmpty()) {
                String s = ready.poll();
                ordered.add(steps.get(s));
                for (String d : dependents.getOrDefault(s, List.of())) {
                    if (waiting.merge(d, -1, Integer::sum) == 0) {
                        ready.add(d);
                    }
                }
            }
            if (ordered.size() < steps.size()) {
                throw new IllegalArgumentException("Workflow '" + name + "' has a cycle: " + cycle(waiting)
                        + "; a workflow must be a graph without cycles");
            }
            return new Workflow(name, ordered);
        }

        /** @return one cycle among the steps left waiting, as "a -> b -> a" */
        private String cycle(Map<String, Integer> waiting) {
            // Every step left waiting has a dependency left waiting: follow them until one repeats.
            String start = null;
            for (Step s : steps.values()) {
                if (waiting.get(s.name()) > 0) {
                    start = s.name();
                    break;
                }
            }
            List<String> path = new ArrayList<>();
            Map<String, Integer> seen = new HashMap<>();
            String at = start;
            while (!seen.containsKey(at)) {
                seen.put(at, path.size());
                path.add(at);
                for (Dependency d : steps.get(at).dependencies()) {
                    if (waiting.get(d.step()) > 0) {
                        at = d.step();
                        break;
                    }
                }
            }
            List<String> loop = new ArrayList<>(path.subList(seen.get(at), path.size()));
            java.util.Collections.reverse(loop); // dependency first: "a -> b" reads "b waits for a"
            // Starting at the step added first, so the same graph is always named the same way.
            List<String> order = new ArrayList<>(steps.keySet());
            String first = loop.stream()
                    .min(java.util.Comparator.comparingInt(order::indexOf))
                    .orElseThrow();
            java.util.Collections.rotate(loop, -loop.indexOf(first));
            loop.add(loop.get(0));
            return String.join(" -> ", loop);
        }
    }
}
