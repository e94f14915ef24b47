#define LZ4_STATIC_LINKING_ONLY
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
typedef struct { uint32_t tag, len; const char *p; } rec;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static uint64_t s=88172645463325252ull; static uint64_t rnd(){s^=s<<13;s^=s>>7;s^=s<<17;return s;}
// dictionary: random sample of records from [0, train) (of tag, or any tag when tag==0), up to size bytes
static int build(rec*r,int train,uint32_t tag,char*dict,int size){int n=0;int tries=0;while(n<size&&tries<1000000){tries++;rec*x=&r[rnd()%train];if(tag&&x->tag!=tag)continue;int k=x->len; if(n+k>size)k=size-n; memcpy(dict+n,x->p,k);n+=k;}return n;}
int main(int argc,char**argv){
  FILE*f=fopen(argv[1],"rb");fseek(f,0,SEEK_END);long sz=ftell(f);fseek(f,0,SEEK_SET);char*d=malloc(sz);fread(d,1,sz,f);
  int dsize=argc>2?atoi(argv[2]):65536;
  rec*r=malloc(sizeof(rec)*300000);int n=0;long p=0;long raw=0;
  while(p<sz){memcpy(&r[n].tag,d+p,4);memcpy(&r[n].len,d+p+4,4);r[n].p=d+p+8;p+=8+r[n].len;raw+=r[n].len;n++;}
  int train=n/10; char out[1024]; char back[1024];
  // alone
  long c=0; for(int i=0;i<n;i++){int w=LZ4_compress_default(r[i].p,out,r[i].len,1024); c+= (w>0&&w<r[i].len)?w:r[i].len;}
  printf("records %d raw %.1f MB, alone %.3f\n",n,raw/1e6,(double)c/raw);
  // per store
  char*dict=malloc(dsize); int dl=build(r,train,0,dict,dsize);
  LZ4_stream_t*ds=LZ4_createStream(); LZ4_loadDict(ds,dict,dl);
  LZ4_stream_t*ws=LZ4_createStream();
  c=0; double t0=now();
  for(int i=0;i<n;i++){LZ4_resetStream_fast(ws);LZ4_attach_dictionary(ws,ds);int w=LZ4_compress_fast_continue(ws,r[i].p,out,r[i].len,1024,1);c+=(w>0&&w<r[i].len)?w:r[i].len;}
  double t1=now(); printf("store dict %d: %.3f  attach %.0f ns/rec\n",dl,(double)c/raw,(t1-t0)/n*1e9);
  // memcpy variant
  LZ4_stream_t*prep=LZ4_createStream(); LZ4_loadDict(prep,dict,dl);
  t0=now(); long c2=0; for(int i=0;i<n;i++){memcpy(ws,prep,sizeof(LZ4_stream_t));int w=LZ4_compress_fast_continue(ws,r[i].p,out,r[i].len,1024,1);c2+=(w>0&&w<r[i].len)?w:r[i].len;}
  t1=now(); printf("memcpy state %.3f %.0f ns/rec (state %zu B)\n",(double)c2/raw,(t1-t0)/n*1e9,sizeof(LZ4_stream_t));
  t0=now(); for(int i=0;i<n/20;i++){LZ4_loadDict(ws,dict,dl);LZ4_compress_fast_continue(ws,r[i].p,out,r[i].len,1024,1);} t1=now(); printf("loadDict each %.0f ns/rec\n",(t1-t0)/(n/20)*1e9);
  // plain compress speed for reference
  t0=now(); for(int i=0;i<n;i++){LZ4_compress_default(r[i].p,out,r[i].len,1024);} t1=now(); printf("plain compress %.0f ns/rec\n",(t1-t0)/n*1e9);
  // decompress usingDict
  char*comp=malloc(n*(size_t)400); int*cl=malloc(n*4);
  for(int i=0;i<n;i++){LZ4_resetStream_fast(ws);LZ4_attach_dictionary(ws,ds);cl[i]=LZ4_compress_fast_continue(ws,r[i].p,comp+(size_t)i*400,r[i].len,400,1);}
  t0=now(); for(int i=0;i<n;i++){int k=LZ4_decompress_safe_usingDict(comp+(size_t)i*400,back,cl[i],1024,dict,dl); if(k!=(int)r[i].len||memcmp(back,r[i].p,k)){printf("mismatch\n");return 1;}} t1=now();
  printf("decompress usingDict %.0f ns/rec\n",(t1-t0)/n*1e9);
  // per type, same total and same per-type size
  for(int mode=0;mode<2;mode++){int per= mode? dsize: dsize/4; long ct=0;
    for(uint32_t tag=1;tag<=4;tag++){char*td=malloc(per);int tl=build(r,train,tag,td,per);LZ4_stream_t*ts=LZ4_createStream();LZ4_loadDict(ts,td,tl);
      for(int i=0;i<n;i++){if(r[i].tag!=tag)continue;LZ4_resetStream_fast(ws);LZ4_attach_dictionary(ws,ts);int w=LZ4_compress_fast_continue(ws,r[i].p,out,r[i].len,1024,1);ct+=(w>0&&w<r[i].len)?w:r[i].len;}}
    printf("per type dict of %d each: %.3f\n",per,(double)ct/raw);}
  return 0;}
