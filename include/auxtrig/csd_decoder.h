/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef AUXTRIG_CSD_DECODER_H
#define AUXTRIG_CSD_DECODER_H
#include "auxtrig/pdata_reader.h"
int csd_decoder__script(struct pdata_reader *r, const struct pdata_record_auxtrace_info *info,
			const char *input, const char *symfs, int packets, char itrace);
#endif
