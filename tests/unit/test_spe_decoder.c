// SPDX-License-Identifier: BSD-2-Clause
/* spe_decoder: packet boundaries, headers, addresses, records, truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "auxtrig/decode/spe_decoder.h"

static void test_spe_decoder_packet_sizes(void **state)
{
	/* PC at EL1 non-secure: a kernel address, its top byte filled */
	static const unsigned char pc_el1[] = { 0xb0, 0x00, 0x10, 0x08, 0x00, 0x00, 0x80, 0xff, 0xa0 };
	/* extended header: address index 0b01 << 3 | 0 = 8 */
	static const unsigned char ext[] = { 0x21, 0xb0, 1, 2, 3, 4, 5, 6, 7, 0 };
	static const unsigned char ev2[] = { 0x52, 0x82, 0x02 };	/* RETIRED MISPRED, LLC-REFILL */
	struct spe_packet pkt;
	char d[128];

	(void)state;
	assert_int_equal(spe_decoder__packet(pc_el1, sizeof(pc_el1), &pkt), 9);
	assert_int_equal(pkt.type, SPE_PKT_ADDRESS);
	assert_int_equal(pkt.index, 0);
	assert_true(spe_packet__addr(&pkt) == 0xffff800000081000ULL);
	assert_string_equal(spe_packet__desc(&pkt, d, sizeof(d)), "PC 0xffff800000081000 el1 ns=1");
	/* every shorter buffer: the packet is cut, nothing is read past the end */
	for (size_t len = 0; len < sizeof(pc_el1); len++)
		assert_int_equal(spe_decoder__packet(pc_el1, len, &pkt), 0);

	assert_int_equal(spe_decoder__packet(ext, sizeof(ext), &pkt), 10);
	assert_int_equal(pkt.index, 8);
	assert_int_equal(spe_decoder__packet(ext, 1, &pkt), 0);

	assert_int_equal(spe_decoder__packet(ev2, sizeof(ev2), &pkt), 3);
	assert_string_equal(spe_packet__desc(&pkt, d, sizeof(d)), "EV RETIRED MISPRED LLC-REFILL");

	assert_int_equal(spe_decoder__packet("\x7f", 1, &pkt), 1); /* unknown header: one byte */
	assert_int_equal(pkt.type, SPE_PKT_BAD);
}

static void test_spe_decoder_record_ends_at_timestamp_or_end(void **state)
{
	static const unsigned char s[] = {
		0xb0, 0x80, 0x16, 0x40, 0, 0, 0, 0, 0x80,	/* PC 0x401680 el0 */
		0x49, 0x01,					/* ST */
		0xb2, 0x08, 0x20, 0, 0, 0, 0x7f, 0, 0,		/* VA */
		0x71, 1, 0, 0, 0, 0, 0, 0, 0,			/* TS 1 */
		0x00, 0x00,					/* PAD */
		0xb0, 0x84, 0x16, 0x40, 0, 0, 0, 0, 0x80,
		0x01,						/* END */
	};
	struct spe_record rec;
	size_t off = 0, n;
	int records = 0;

	(void)state;
	spe_record__init(&rec);
	assert_true(rec.context == (__u64)-1);
	while (off < sizeof(s)) {
		struct spe_packet pkt;

		n = spe_decoder__packet(s + off, sizeof(s) - off, &pkt);
		assert_true(n > 0);
		off += n;
		if (spe_record__add(&rec, &pkt)) {
			if (records == 0) {
				assert_true(rec.from_ip == 0x401680);
				assert_int_equal(rec.op, 2);
				assert_true(rec.va == 0x7f0000002008ULL);
				assert_true(rec.timestamp == 1);
			} else {
				assert_true(rec.from_ip == 0x401684);
				assert_int_equal(rec.op, 0);
				assert_true(rec.timestamp == 0);
			}
			records++;
			spe_record__init(&rec);
		}
	}
	assert_int_equal(records, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spe_decoder_packet_sizes),
		cmocka_unit_test(test_spe_decoder_record_ends_at_timestamp_or_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
