package io.dbtasks.server.dashboard;

import io.dbtasks.workflow.Dependency;
import io.dbtasks.workflow.StepState;
import io.dbtasks.workflow.WorkflowRun;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A workflow's steps laid out in layers for the dashboard's SVG drawing: a step's layer is 0 when it
 * has no dependencies, else one more than its deepest dependency's (the longest-path layering of
 * Sugiyama-style drawings); within a layer, steps go top to bottom in id order. Edges run from a
 * dependency's right side to its dependent's left side. Computed on the server, so the page needs no
 * script to draw it. Immutable.
 *
 * @param nodes the steps with their boxes
 * @param edges the dependency edges
 * @param width the drawing's width, pixels
 * @param height the drawing's height, pixels
 */
public record WorkflowGraph(List<Node> nodes, List<Edge> edges, int width, int height) {
    /** The most steps drawn; a larger workflow is shown as the table only. */
    public static final int MAX_DRAWN = 300;

    static final int NODE_WIDTH = 170;
    static final int NODE_HEIGHT = 40;
    static final int LAYER_GAP = 70;
    static final int ROW_GAP = 16;
    static final int MARGIN = 10;

    /**
     * One step's box.
     *
     * @param step the step
     * @param level its layer
     * @param x left, pixels
     * @param y top, pixels
     * @param stateClass the CSS class of its state, {@code state-} and the state in lower case
     * @param label its name, shortened to fit the box
     */
    public record Node(StepState step, int level, int x, int y, String stateClass, String label) {}

    /**
     * One dependency edge, as an SVG path.
     *
     * @param from the dependency's step name
     * @param to the dependent's step name
     * @param path the path's {@code d} attribute
     * @param dashed whether the edge runs the dependent anyway on a failure (RUN or RUN_IF_ANY_FAILED)
     */
    public record Edge(String from, String to, String path, boolean dashed) {}

    /**
     * Lays out {@code run}'s steps.
     *
     * @param run the workflow
     * @return its drawing; no nodes if it has none or more than {@link #MAX_DRAWN}
     */
    public static WorkflowGraph of(WorkflowRun run) {
        Map<String, Integer> levels = levels(run.steps());
        Map<Integer, List<StepState>> layers = new java.util.TreeMap<>();
        for (StepState s : run.steps().size() > MAX_DRAWN ? List.<StepState>of() : run.steps()) {
            layers.computeIfAbsent(levels.get(s.name()), k -> new ArrayList<>()).add(s);
        }
        List<Node> nodes = new ArrayList<>();
        Map<String, Node> placed = new HashMap<>();
        int rows = 0;
        for (Map.Entry<Integer, List<StepState>> layer : layers.entrySet()) {
            List<StepState> steps = layer.getValue();
            steps.sort(Comparator.comparingLong(StepState::taskId));
            rows = Math.max(rows, steps.size());
            for (int i = 0; i < steps.size(); i++) {
                StepState s = steps.get(i);
                Node n = new Node(
                        s,
                        layer.getKey(),
                        MARGIN + layer.getKey() * (NODE_WIDTH + LAYER_GAP),
                        MARGIN + i * (NODE_HEIGHT + ROW_GAP),
                        "state-" + s.status().name().toLowerCase(Locale.ROOT),
                        s.name().length() <= 22 ? s.name() : s.name().substring(0, 21) + "…");
                nodes.add(n);
                placed.put(s.name(), n);
            }
        }
        List<Edge> edges = new ArrayList<>();
        for (StepState s : run.steps()) {
            Node to = placed.get(s.name());
            if (to == null) {
                continue;
            }
            for (Dependency d : s.dependencies()) {
                Node from = placed.get(d.step());
                if (from == null) {
                    continue;
                }
                int x1 = from.x() + NODE_WIDTH;
                int y1 = from.y() + NODE_HEIGHT / 2;
                int x2 = to.x();
                int y2 = to.y() + NODE_HEIGHT / 2;
                int bend = Math.max(20, (x2 - x1) / 2);
                edges.add(new Edge(
                        d.step(),
                        s.name(),
                        "M" + x1 + "," + y1 + " C" + (x1 + bend) + "," + y1 + " " + (x2 - bend) + "," + y2 + " " + x2
                                + "," + y2,
                        d.onFailure() != Dependency.OnFailure.CANCEL));
            }
        }
        int width = layers.isEmpty() ? 0 : 2 * MARGIN + layers.size() * (NODE_WIDTH + LAYER_GAP) - LAYER_GAP;
        int height = rows == 0 ? 0 : 2 * MARGIN + rows * (NODE_HEIGHT + ROW_GAP) - ROW_GAP;
        return new WorkflowGraph(nodes, edges, width, height);
    }

    /**
     * The longest path from a step without dependencies to each step, by Kahn's topological order
     * (iterative, so a long chain needs no deep stack); a step on a cycle (never stored) stays at 0.
     */
    static Map<String, Integer> levels(List<StepState> steps) {
        Map<String, StepState> byName = new HashMap<>();
        steps.forEach(s -> byName.put(s.name(), s));
        Map<String, Integer> indegree = new HashMap<>();
        Map<String, List<String>> dependents = new HashMap<>();
        Map<String, Integer> levels = new HashMap<>();
        for (StepState s : steps) {
            levels.put(s.name(), 0);
            int n = 0;
            for (Dependency d : s.dependencies()) {
                if (byName.containsKey(d.step())) {
                    n++;
                    dependents.computeIfAbsent(d.step(), k -> new ArrayList<>()).add(s.name());
                }
            }
            indegree.put(s.name(), n);
        }
        java.util.ArrayDeque<String> ready = new java.util.ArrayDeque<>();
        indegree.forEach((name, n) -> {
            if (n == 0) {
                ready.add(name);
            }
        });
        while (!ready.isEmpty()) {
            String name = ready.poll();
            for (String dependent : dependents.getOrDefault(name, List.of())) {
                levels.merge(dependent, levels.get(name) + 1, Math::max);
                if (indegree.merge(dependent, -1, Integer::sum) == 0) {
                    ready.add(dependent);
                }
            }
        }
        return levels;
    }
}
