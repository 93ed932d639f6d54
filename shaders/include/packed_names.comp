// Names for one element of a blob by its packing (1, 4 or 8), so that one body serves every
// packing: sfp_of(n)/afp_of(n) (storage and arithmetic types), fp_of(n) (fp32 whatever the
// variant: 1 and 4 only) and imfmt_of(n) (the image format), and for a body written for one
// packing, `#define PACK n` before the include: sfpN, afpN, fpN, imfmtN, buffer_ldN/stN and
// image3d_ldN/stN.
#ifndef PACK_PASTE
#define PACK_PASTE2(a, b) a##b
#define PACK_PASTE(a, b) PACK_PASTE2(a, b)

#define sfp_of(n) PACK_PASTE(sfp_of_, n)
#define sfp_of_1 sfp
#define sfp_of_4 sfpvec4
#define sfp_of_8 sfpvec8
#define afp_of(n) PACK_PASTE(afp_of_, n)
#define afp_of_1 afp
#define afp_of_4 afpvec4
#define afp_of_8 afpvec8
#define fp_of(n) PACK_PASTE(fp_of_, n)
#define fp_of_1 float
#define fp_of_4 vec4
// pack8 goes through images as two pack4 texels along x
#define imfmt_of(n) PACK_PASTE(imfmt_of_, n)
#define imfmt_of_1 imfmtc1
#define imfmt_of_4 imfmtc4
#define imfmt_of_8 imfmtc4

#define sfpN sfp_of(PACK)
#define afpN afp_of(PACK)
#define fpN fp_of(PACK)
#define imfmtN imfmt_of(PACK)
#define buffer_ldN PACK_PASTE(buffer_ld, PACK)
#define buffer_stN PACK_PASTE(buffer_st, PACK)
#define image3d_ldN PACK_PASTE(image3d_ld, PACK)
#define image3d_stN PACK_PASTE(image3d_st, PACK)
#endif
