// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The capabilities a suite (on its class) or a test (on its method) needs from the setup it runs on,
 * and why. On a setup without them the test is skipped and the report says which capability was
 * missing and {@link #why()}.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface Requires {
    Capability[] value();

    /** Why the test cannot run without them, shown in the report. */
    String why();
}
