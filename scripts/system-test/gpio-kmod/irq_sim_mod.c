// SPDX-License-Identifier: GPL-2.0
/*
 * Builds the kernel's irq_sim.c as a module. irq_sim.c calls irq_to_desc(), which modules cannot
 * use since Linux 5.11 (no longer exported), so modpost would fail. The same descriptor is reached
 * through two functions modules may use: irq_get_irq_data() (exported) and irq_data_to_desc()
 * (inline in the header).
 */
#include <linux/module.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>

#define irq_to_desc(n) irq_data_to_desc(irq_get_irq_data(n))

#include "irq_sim.c"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Interrupt simulator (out-of-tree build for the HomeAgent system test)");
