// SPDX-License-Identifier: GPL-2.0
/*
 * tsc-khz: prints the host's TSC rate in kHz, measured against
 * CLOCK_MONOTONIC_RAW over 200 ms. scripts/lib.sh (tcg_clock_args) runs it;
 * see there for why x86_64 guests need it.
 */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

/*
 * A clock reading and the TSC at the same moment: of 64 tries, the one whose
 * two TSC reads around the clock are closest, so that a preemption in
 * between (the test command runs this beside kernel builds) cannot skew it.
 */
static void sample(unsigned long long *tsc, double *ns)
{
	unsigned long long a, b, best = ~0ULL;
	struct timespec ts;

	for (int i = 0; i < 64; i++) {
		a = __rdtsc();
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = ts.tv_sec * 1e9 + ts.tv_nsec;
		}
	}
}

int main(void)
{
	const struct timespec nap = { 0, 200000000 };
	unsigned long long t0, t1;
	double ns0, ns1;

	sample(&t0, &ns0);
	nanosleep(&nap, NULL);
	sample(&t1, &ns1);
	if (ns1 <= ns0 || t1 <= t0)
		return 1;
	printf("%.0f\n", (t1 - t0) / (ns1 - ns0) * 1e6);
	return 0;
}
