// SPDX-License-Identifier: GPL-2.0
/*
 * C glue of module load and unload (src/codetag/registry/module.rs,
 * src/alloc_tag/counters.rs): the module notifier that gives a module's
 * tags their counters when it comes, and the delayed work that frees the
 * tags kept for unloaded modules once their allocations are gone.
 *
 * C because notifier_from_errno(), the initcall levels and
 * DECLARE_DELAYED_WORK() are macros.
 */

#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/workqueue.h>

#include "../include/alloctag_glue.h"

#ifdef CONFIG_MODULES
/*
 * Frees the tags kept for unloaded modules once their allocations are gone:
 * a pass a second after something changed, backing off to one every 8 s
 * while nothing does (a leak that is never freed is kept for good), on the
 * power-efficient workqueue. DECLARE_DELAYED_WORK() initialises the static
 * work item (a macro).
 */
static void alloctag_reap_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(alloctag_reap_work, alloctag_reap_fn);
static unsigned long alloctag_reap_delay = HZ;

static void alloctag_reap_fn(struct work_struct *work)
{
	unsigned long delay = READ_ONCE(alloctag_reap_delay);

	switch (alloctag_codetag_reap()) {
	case 0:
		return;
	case 1:
		delay = min(delay * 2, 8UL * HZ);
		break;
	default:
		delay = HZ;
	}
	WRITE_ONCE(alloctag_reap_delay, delay);
	queue_delayed_work(system_power_efficient_wq, &alloctag_reap_work, delay);
}

void alloctag_reap_later(void)
{
	WRITE_ONCE(alloctag_reap_delay, HZ);
	/*
	 * Due within a second, never pushed back: modules unloaded faster
	 * than one a second would otherwise keep the pass from ever running.
	 */
	if (!delayed_work_pending(&alloctag_reap_work) ||
	    time_after(READ_ONCE(alloctag_reap_work.timer.expires), jiffies + HZ))
		mod_delayed_work(system_power_efficient_wq, &alloctag_reap_work, HZ);
}

/*
 * A module's allocation tags get their counters when it comes, before the
 * loader parses its parameters (which may run its code); they go with the
 * tags (src/alloc_tag/counters.rs). First of the module notifiers, registered at
 * core_initcall, before any module can load: initcall levels and
 * notifier_from_errno() are C macros.
 */
static int alloctag_module_notify(struct notifier_block *nb,
				  unsigned long state, void *mod)
{
	return notifier_from_errno(alloctag_module_counters(mod, state));
}

static struct notifier_block alloctag_module_nb = {
	.notifier_call = alloctag_module_notify,
	.priority = INT_MAX,
};

static int __init alloctag_module_counters_init(void)
{
	return register_module_notifier(&alloctag_module_nb);
}
core_initcall(alloctag_module_counters_init);
#endif
