// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import java.lang.reflect.AnnotatedElement;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Skips a test whose {@link Requires} (on its method or its suite) names a capability the setup of
 * the running suite lacks, or where the setup's device is known to differ from the contract
 * ({@link ConformanceSetup#knownDeviation}). Decided per test, when the test instance (and with it the setup) exists.
 */
final class CapabilityCondition implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<Object> instance = context.getTestInstance();
        if (instance.isEmpty() || !(instance.get() instanceof AbstractVerbsTest t) || t.setup == null) {
            return ConditionEvaluationResult.enabled("setup not known yet");
        }
        List<Requires> needs = new ArrayList<>();
        context.getTestMethod().map(m -> m.getAnnotation(Requires.class)).ifPresent(needs::add);
        add(needs, t.getClass());
        for (Requires r : needs) {
            EnumSet<Capability> missing = EnumSet.noneOf(Capability.class);
            for (Capability c : r.value()) {
                if (!t.setup.has(c)) {
                    missing.add(c);
                }
            }
            if (!missing.isEmpty()) {
                return ConditionEvaluationResult.disabled(
                        "setup " + t.setup.name() + " lacks " + missing + ": " + r.why());
            }
        }
        String method = context.getTestMethod().map(java.lang.reflect.Method::getName).orElse("");
        String deviation = t.setup.knownDeviation(t.getClass().getSimpleName(), method, context.getDisplayName());
        if (deviation != null) {
            return ConditionEvaluationResult.disabled("setup " + t.setup.name() + " is known to differ from the contract"
                    + " here: " + deviation);
        }
        return ConditionEvaluationResult.enabled("setup " + t.setup.name() + " has what the test needs");
    }

    private static void add(List<Requires> needs, AnnotatedElement e) {
        Requires r = e.getAnnotation(Requires.class);
        if (r != null) {
            needs.add(r);
        }
    }
}
